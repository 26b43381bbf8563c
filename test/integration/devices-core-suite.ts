import { stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPageServer, type PageServer } from '../support/browser-fixtures';
import { parsePublicId } from '../../server/domain/ids';
import { apiClient, type ApiCall } from '../support/http';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';
import { isRunning } from '../../server/os/processes';

export interface CoreSuiteSetup {
  /** Extra environment for the service (browser provider). */
  env(): Promise<Record<string, string>>;
  /** Local Chromium: a process per device whose pid and profile can be checked. */
  local: boolean;
  teardown?(): Promise<void>;
}

/**
 * The device journey every browser provider must pass: create (a real browser that
 * loads a page served here), sleep, wake with the cookie kept, delete.
 */
export function deviceCoreSuite(name: string, setup: CoreSuiteSetup): void {
  describe(`devices on ${name}`, () => {
    let test: TestService;
    let tenant: TestTenant;
    let pages: PageServer;
    let api: ApiCall;

    beforeAll(async () => {
      pages = await startPageServer();
      test = await startTestService(await setup.env());
      tenant = await createTenant(test);
      api = apiClient(test.url, await tenant.key(['operator:devices:read', 'operator:devices:write']));
    });
    afterAll(async () => {
      await test?.stop();
      await pages?.close();
      await setup.teardown?.();
    });

    const pool = () => test.service.services.browserPool;
    const uuidOf = (id: string) => parsePublicId('device', id)!;

    it('creates an active device whose browser loads a page, keeps a cookie across sleep and wake, and deletes it', async () => {
      const created = await api('POST', '/v1/devices', { space_id: tenant.spaceId, name: 'core', idle_suspend_secs: 600 });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.stringMatching(/^dev_[0-9a-f-]{36}$/),
        object: 'device',
        name: 'core',
        region: 'local',
        space_id: tenant.spaceId,
        status: 'active',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        current_task_id: null,
        last_active_at: expect.any(String),
      });
      const id: string = created.body.id;
      const handle = pool().get(uuidOf(id));
      expect(handle).toBeDefined();
      const page = await handle!.page();
      await page.navigate(pages.url('/set-cookie'));
      expect((await page.observe()).title).toBe('Cookie set');
      const pid = handle!.pid;

      const slept = await api('POST', `/v1/devices/${id}/sleep`);
      expect(slept.status).toBe(202);
      expect(slept.body.status).toBe('sleeping');
      expect(pool().get(uuidOf(id))).toBeUndefined();
      if (setup.local) expect(await isRunning(pid!)).toBe(false);
      expect((await api('GET', `/v1/devices/${id}`)).body.status).toBe('sleeping');

      const woke = await api('POST', `/v1/devices/${id}/wake`);
      expect(woke.status).toBe(202);
      expect(woke.body.status).toBe('active');
      const again = pool().get(uuidOf(id))!;
      const pageAgain = await again.page();
      await pageAgain.navigate(pages.url('/show-cookie'));
      expect(await pageAgain.textOf('#cookie')).toContain('device_session=kept');

      const livePid = again.pid;
      const deleted = await api('DELETE', `/v1/devices/${id}`);
      expect(deleted.status).toBe(202);
      expect(deleted.body.status).toBe('terminated');
      expect(pool().get(uuidOf(id))).toBeUndefined();
      if (setup.local) {
        // Answered once terminated; the browser closes and its profile goes right after.
        await expect.poll(() => isRunning(livePid!), { timeout: 20_000 }).toBe(false);
        await expect.poll(() => stat(path.join(test.dataDir, 'profiles', uuidOf(id))).then(() => true, () => false), { timeout: 20_000 }).toBe(false);
      }

      for (const [method, route] of [
        ['DELETE', `/v1/devices/${id}`],
        ['POST', `/v1/devices/${id}/wake`],
        ['POST', `/v1/devices/${id}/sleep`],
      ] as const) {
        const response = await api(method, route);
        expect(response.status).toBe(410);
        expect(response.body.error.code).toBe('device_terminated');
      }
      expect((await api('GET', `/v1/devices/${id}`)).body.status).toBe('terminated');
    });

    it('records every move in the audit trail and the outbox', async () => {
      const created = await api('POST', '/v1/devices', { space_id: tenant.spaceId });
      const id: string = created.body.id;
      expect(created.body.name).toMatch(/^device-[0-9a-f]{4}$/);
      await api('POST', `/v1/devices/${id}/sleep`);
      await api('POST', `/v1/devices/${id}/wake`);
      await api('DELETE', `/v1/devices/${id}`);
      const sql = test.service.services.sql;
      const events = await sql<{ type: string }[]>`select type from events where envelope->'data'->'object'->>'id' = ${id} order by created_at`;
      expect(events.map((row) => row.type)).toEqual([
        'operator.device.created.v1',
        'operator.device.slept.v1',
        'operator.device.woke.v1',
        'operator.device.terminated.v1',
      ]);
      const audit = await sql<{ action: string }[]>`select action from audit_events where resource_id = ${id} order by created_at`;
      expect(audit.map((row) => row.action)).toEqual([
        'operator.device.created',
        'operator.device.slept',
        'operator.device.woke',
        'operator.device.terminated',
      ]);
    });
  });
}
