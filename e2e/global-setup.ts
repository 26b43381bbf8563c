import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ensureConsoleBuild } from '../scripts/ensure-console-build.mjs';
import { startServiceProcess } from '../test/support/service-process';

/**
 * Starts the whole service as `npm start` runs it (console included) on a fresh database
 * and a free port; tests read its address from E2E_BASE_URL.
 */
export default async function globalSetup() {
  ensureConsoleBuild();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'operator-e2e-'));
  const service = await startServiceProcess({ OPERATOR_SERVE_CONSOLE: 'true', OPERATOR_DATA_DIR: dataDir, OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'true' });
  process.env.E2E_BASE_URL = service.url;
  process.env.E2E_DATABASE_URL = service.database.url;
  process.env.E2E_DATA_DIR = dataDir;
  return async () => {
    await service.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
}
