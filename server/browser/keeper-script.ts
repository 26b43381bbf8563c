// The browser keeper's code (keeper/keeper-process.ts) as one bundled file (node-bundle.ts)
// in the keepers' folder, which is the service's alone. The WebSocket client in it is
// still loaded by a remote browser's keeper only (a dynamic import becomes a lazy require).
import { createHash, randomUUID } from 'node:crypto';
import { readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeBundle } from '../os/node-bundle.js';

const KEEPER_SOURCE = fileURLToPath(new URL('./keeper/keeper-process.ts', import.meta.url));
/** keeper-process-<hash of its code>.cjs: a file of that name holds that code. */
const SCRIPT_NAME = /^keeper-process-[0-9a-f]{16}\.cjs$/;

/** Built once per process. */
let bundled: { code: string; name: string } | null = null;

function keeperBundle(): { code: string; name: string } {
  if (bundled !== null) return bundled;
  const code = nodeBundle(KEEPER_SOURCE);
  const hash = createHash('sha256').update(code).digest('hex').slice(0, 16);
  bundled = { code, name: `keeper-process-${hash}.cjs` };
  return bundled;
}

/**
 * The keeper's script in `keepersDir`, written there when it is not yet (whole, by a
 * rename, so a keeper never starts on half of it); the scripts of earlier versions of the
 * service go (a keeper reads its script once, as it starts).
 */
export async function keeperScript(keepersDir: string): Promise<string> {
  const { code, name } = keeperBundle();
  const file = path.join(keepersDir, name);
  if (await stat(file).then(() => true, () => false)) return file;
  const partial = path.join(keepersDir, `${name}.${randomUUID()}.partial`);
  await writeFile(partial, code, { mode: 0o600 });
  await rename(partial, file);
  for (const entry of await readdir(keepersDir)) {
    if (SCRIPT_NAME.test(entry) && entry !== name) await rm(path.join(keepersDir, entry), { force: true });
  }
  return file;
}
