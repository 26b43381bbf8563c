import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The layering of docs/architecture.md, checked on the source: no two folders of server/
// import each other (the areas of server/domain/ count as folders), and tRPC stays in the
// layers that serve it.
const ROOT = path.resolve(import.meta.dirname, '..');
const SERVER = path.join(ROOT, 'server');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(entry) && !/\.test\.tsx?$/.test(entry) ? [full] : [];
  });
}

/** server/domain/<area>, or server/<folder>, or server for a file at the top. */
function folderOf(file: string): string {
  const parts = path.relative(SERVER, file).split(path.sep);
  if (parts.length === 1) return 'server';
  if (parts[0] === 'domain' && parts.length > 2) return `domain/${parts[1]}`;
  return parts[0]!;
}

/** Where a relative specifier points: a file (extension added or swapped) or a folder's index. */
function resolveImport(from: string, specifier: string): string | null {
  const base = path.resolve(path.dirname(from), specifier).replace(/\.(js|ts|mjs)$/, '');
  for (const candidate of [`${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')]) if (existsSync(candidate)) return candidate;
  return null;
}

const APP = path.join(ROOT, 'app');
const SHARED = path.join(ROOT, 'shared');

const files = sourceFiles(SERVER);
const imports = files.map((file) => {
  const specifiers = [...readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((match) => match[1]!);
  return { file, specifiers };
});

describe('import graph', () => {
  it('has no pair of folders importing each other', () => {
    const edges = new Map<string, Set<string>>();
    for (const { file, specifiers } of imports) {
      for (const specifier of specifiers.filter((s) => s.startsWith('.'))) {
        const target = resolveImport(file, specifier);
        if (target === null || !target.startsWith(SERVER)) continue;
        const [from, to] = [folderOf(file), folderOf(target)];
        if (from !== to) edges.set(from, (edges.get(from) ?? new Set()).add(to));
      }
    }
    const pairs = [...edges].flatMap(([from, targets]) => [...targets].filter((to) => from < to && edges.get(to)?.has(from)).map((to) => `${from} <-> ${to}`));
    expect(pairs).toEqual([]);
  });

  it('keeps @trpc/server in the layers that serve tRPC', () => {
    const importers = imports.filter(({ specifiers }) => specifiers.some((s) => s.startsWith('@trpc/server'))).map(({ file }) => folderOf(file));
    expect(importers.length).toBeGreaterThan(0);
    expect(importers.filter((folder) => !['trpc', 'api', 'console', 'assembly'].includes(folder))).toEqual([]);
  });

  it('lets app/ take only types from server/, and shared/ nothing from outside it', () => {
    const crossings: string[] = [];
    for (const file of sourceFiles(APP)) {
      for (const match of readFileSync(file, 'utf8').matchAll(/^import\s+(type\s+)?[^;]*?from\s+'(\.[^']+)'/gms)) {
        const target = resolveImport(file, match[2]!);
        if (target?.startsWith(SERVER) && match[1] === undefined) crossings.push(`${path.relative(ROOT, file)} -> ${match[2]}`);
      }
    }
    for (const file of sourceFiles(SHARED)) {
      for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) {
        const target = specifier!.startsWith('.') ? resolveImport(file, specifier!) : null;
        if (target === null || !target.startsWith(SHARED)) crossings.push(`${path.relative(ROOT, file)} -> ${specifier}`);
      }
    }
    expect(crossings).toEqual([]);
  });
});
