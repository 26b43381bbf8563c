import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
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
  // `wx` keeps the first writer's id if two processes race on a fresh directory.
  await writeFile(file, `${created}\n`, { flag: 'wx' }).catch(async (error: unknown) => {
    if (!(error instanceof Error && 'code' in error && error.code === 'EEXIST')) throw error;
  });
  return (await readFile(file, 'utf8')).trim();
}
