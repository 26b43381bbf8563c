import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { startService } from '../../server/assembly/start-service';
import { loadConfig } from '../../server/core/config';
import { createApiKey, createOrganization, createSpace } from '../../server/domain/orgs/operator-admin';
import { systemStateDirectoryFor } from '../../server/os/system-state-directory';
import { freePort } from '../support/free-port';
import { apiClient } from '../support/http';
import { waitForTaskEnd } from '../support/task-helpers';
import { startTaskPages } from '../support/task-pages';

// The newcomer's first try on a server: root, in a folder nobody else may enter (/root, a
// `mktemp -d` folder), no DATABASE_URL. The embedded PostgreSQL runs as `postgres` and the
// browsers under their own uids, none of which can enter that folder; the service must
// start anyway and run a task (binaries and state they need live where they can reach).
it.skipIf(process.getuid?.() !== 0)('starts as root with the embedded database from a 0700 folder and runs a task', async () => {
  const folder = await mkdtemp(path.join(tmpdir(), 'operator-private-'));
  await chmod(folder, 0o700);
  const dataDir = path.join(folder, '.data');
  const pages = await startTaskPages();
  const service = await startService(
    loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      OPERATOR_DATA_DIR: dataDir,
      OPERATOR_EMBEDDED_PG_PORT: String(await freePort()),
      OPERATOR_SERVE_CONSOLE: 'false',
      OPERATOR_WARM_BROWSERS: '0',
      OPERATOR_LOG_LEVEL: 'silent',
      OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'true',
    }),
  );
  try {
    expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
    const db = service.services.db;
    const { org_id: orgId } = await createOrganization(db, { name: 'Newcomer', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
    const { space_id: spaceId } = await createSpace(db, orgId, 'default');
    const { key } = await createApiKey(db, { orgId, scopes: ['operator:devices:write', 'operator:tasks:write', 'operator:tasks:read'], spaceIds: [], env: 'test' });
    const api = apiClient(service.url, key);
    const device = await api('POST', '/v1/devices', { space_id: spaceId });
    expect(device.status).toBe(201);
    const task = await api('POST', `/v1/devices/${device.body.id}/tasks`, { prompt: `go to ${pages.url('/plain')} then return the title` });
    expect(await waitForTaskEnd(api, task.body.id)).toMatchObject({ status: 'succeeded', result: 'Plain' });
    await api('DELETE', `/v1/devices/${device.body.id}`);
  } finally {
    await service.close();
    await pages.close();
    await rm(folder, { recursive: true, force: true });
    // The cluster and profiles the service kept outside the private folder (a known limit:
    // nothing removes them with the data directory).
    await rm(systemStateDirectoryFor(dataDir), { recursive: true, force: true });
  }
});
