import { randomUUID } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

const HOST_ID_FILE = 'host-id';

/**
 * Identifies the host that runs a device's browser (devices.host_id). It is kept in the
 * data directory, next to the browser profiles it stands for: a restart on the same data
 * directory is the same host (and reconciles its devices), while the process id and
 * the machine's hostname may change between runs (containers). Two machines never
 * share a data directory, so they never share an id.
 */
export async function loadHostId(dataDir: string): Promise<string> {
  const file = path.join(dataDir, HOST_ID_FILE);
  try {
    const existing = (await readFile(file, 'utf8')).trim();
    if (existing !== '') return existing;
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'ENOENT')) throw error;
  }
  await mkdir(dataDir, { recursive: true });
  const created = `host_${randomUUID()}`;
  // Written whole under a private name, then linked into place: link() fails if the
  // file exists, so racing first starts agree on one id and nobody reads a partial file.
  const draft = `${file}.${created}`;
  await writeFile(draft, `${created}\n`);
  try {
    await link(draft, file);
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'EEXIST')) throw error;
  } finally {
    await rm(draft, { force: true });
  }
  return (await readFile(file, 'utf8')).trim();
}
