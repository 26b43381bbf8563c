// TypeScript that the service runs as processes of their own (the browser keeper, the
// spawner) as one CommonJS file of plain JavaScript, bundled by esbuild. Node would run
// the TypeScript through its type stripper, which costs such a process about 26 MB at
// rest, and would not start it at all under a Node without one.
import { buildSync } from 'esbuild';

/**
 * The code of `source` (a file path) and all it imports, for Node to run as it is.
 * Tens to hundreds of milliseconds of esbuild: callers build once per process (the sources
 * do not change while it runs).
 */
export function nodeBundle(source: string): string {
  const result = buildSync({
    entryPoints: [source],
    bundle: true,
    write: false,
    format: 'cjs',
    platform: 'node',
    target: 'node24',
    // Unminified, so a process's stack traces name its functions.
    minify: false,
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (output === undefined) throw new Error(`esbuild produced no bundle of ${source}`);
  return output.text;
}
