import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../server/core/config';
import { DATA_DIRECTORY_LOCK_FILE } from '../../server/domain/devices/data-directory-lock';
import { startService } from '../../server/assembly/start-service';
import { startTestService, type TestService } from '../support/test-service';

// One process per host id: the data directory is the host, and a second service on it
// would reconcile and kill the first one's browsers as its own.
let test: TestService;

beforeAll(async () => {
  test = await startTestService();
});
afterAll(async () => {
  await test?.stop();
});

it('refuses a second service on a data directory a live one holds, and starts once it stopped or crashed', async () => {
  const config = loadConfig({ ...test.env, PORT: '0' });
  await expect(startService(config)).rejects.toThrow(`data directory ${test.dataDir} is in use by another running service (pid ${process.pid})`);
  // The refused start left nothing behind: the first still serves.
  expect((await fetch(`${test.url}/readyz`)).status).toBe(200);

  await test.service.close();
  const next = await startService(config);
  await next.close();

  // A crash leaves the lock file, naming a pid that is gone; the kernel's lock went with it.
  await writeFile(path.join(test.dataDir, DATA_DIRECTORY_LOCK_FILE), '2147483646\n');
  test.service = await startService(config);
  expect((await fetch(`${test.service.url}/readyz`)).status).toBe(200);
});
