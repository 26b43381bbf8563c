// The egress proxy's port, kept in the data directory from one start to the next:
// browsers kept across a restart were told the proxy's address when they started, and
// must find it listening again (docs/architecture.md, "Process model").
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

const FILE = 'egress-port';

export async function loadEgressPort(dataDir: string): Promise<number | null> {
  try {
    const text = (await readFile(path.join(dataDir, FILE), 'utf8')).trim();
    return /^\d+$/.test(text) && Number(text) > 0 && Number(text) < 65536 ? Number(text) : null;
  } catch {
    return null;
  }
}

export async function saveEgressPort(dataDir: string, port: number): Promise<void> {
  await writeFile(path.join(dataDir, FILE), `${port}\n`, { mode: 0o600 });
}
