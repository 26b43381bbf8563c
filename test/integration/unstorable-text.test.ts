import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { organizations } from '../../db/schema';
import type { ConsoleAppRouter } from '../../server/console/console-router';
import { createOperator } from '../../server/domain/console/operator-accounts';
import { createLogger } from '../../server/core/log';
import { DeviceTracker } from '../support/device-tracker';
import { apiClient, type ApiCall } from '../support/http';
import { routeCatalogue, servedRoutes, type RouteSpec } from '../support/route-catalogue';
import { readStream, waitForTaskEnd } from '../support/task-helpers';
import { allScopes, createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

// Text PostgreSQL cannot store (U+0000, unpaired UTF-16 surrogates): refused with 400
// invalid_request naming the field, on every /v1 route, the resolve callback and the
// console, changing nothing; cleaned with U+FFFD when a page holds it; and never logged
// with a failed query's parameters. Real server, PostgreSQL and Chromium.

const NUL = 'a\u0000b';
const LONE_SURROGATE = 'a\uD800b';

let test: TestService;
let tenant: TestTenant;
let receiver: WebhookReceiver;
let pageServer: http.Server;
let pageUrl: string;
let api: ApiCall;
let key: string;
const devices = new DeviceTracker(() => api);
/** A live resource of each kind, so every route with an `{id}` reaches a real one. */
const ids: Record<string, string> = {};
let escalationBearer: string;

beforeAll(async () => {
  // The page keeps NUL and an unpaired surrogate in its title and text: scripts can put
  // them there even where the HTML parser would not.
  pageServer = http.createServer((_request, response) => {
    response.setHeader('content-type', 'text/html; charset=utf-8');
    response.end(`<!doctype html><title>x</title><p id="t">x</p>
      <script>document.title = 'Title\\u0000\\uD800'; document.getElementById('t').textContent = 'Text\\u0000\\uD800';</script>`);
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/nul`;
  receiver = await startWebhookReceiver();
  test = await startTestService({ OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'true' });
  tenant = await createTenant(test, { escalationUrl: receiver.url });
  key = await tenant.key(allScopes);
  api = apiClient(test.url, key);

  // One live resource of every kind a route's {id} names: a device with a control
  // session, a task parked on a question (whose escalation was delivered with its
  // bearer), and a webhook endpoint.
  const device = await devices.create(tenant.spaceId);
  ids.dev = device;
  ids.ses = (await api('POST', `/v1/devices/${device}/sessions`, { mode: 'control' })).body.id;
  // Its deliveries go to the page server; the receiver hears only the escalation.
  ids.whe = (await api('POST', '/v1/webhook_endpoints', { url: pageUrl })).body.id;
  const task = await api('POST', `/v1/devices/${device}/tasks`, { prompt: 'ask a human "Which plan?"' });
  ids.task = task.body.id;
  await waitForTaskEnd(api, task.body.id, 20_000, ['needs_human']);
  const [delivery] = await receiver.waitFor(1);
  const delivered = JSON.parse(delivery!.rawBody.toString('utf8'));
  ids.esc = delivered.escalation.id;
  escalationBearer = delivered.token;
  await waitForDeliveryRecorded();
});
afterAll(async () => {
  await devices.deleteAll();
  await test?.stop();
  await receiver?.close();
  await new Promise((resolve) => pageServer?.close(resolve));
});

async function waitForDeliveryRecorded(): Promise<void> {
  for (let tries = 0; tries < 100; tries += 1) {
    const [row] = await test.service.services.db.execute<{ pending: boolean }>(sql`select bool_or(delivery_status = 'pending') as pending from escalations`);
    if (row?.pending === false) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Everything a refused request could have changed, as one comparable value. */
async function databaseState(): Promise<unknown> {
  const [state] = await test.service.services.db.execute(sql`select
    (select count(*) from organizations) as organizations,
    (select count(*) from spaces) as spaces,
    (select count(*) from audit_events) as audit_events,
    (select count(*) from events) as events,
    (select count(*) from idempotency_keys) as idempotency_keys,
    (select count(*) from task_steps) as task_steps,
    (select string_agg(concat_ws('|', id, name, status, idle_suspend_secs, current_task_id), ',' order by id) from devices) as devices,
    (select string_agg(concat_ws('|', id, status, prompt, result::text), ',' order by id) from tasks) as tasks,
    (select string_agg(concat_ws('|', id, revoked_at, hold_task_id), ',' order by id) from sessions) as sessions,
    (select string_agg(t::text, ',' order by id) from webhook_endpoints t) as webhook_endpoints,
    (select string_agg(concat_ws('|', id, status, answer, resolved_by), ',' order by id) from escalations) as escalations`);
  return state;
}

/** The route's path with its `{id}` the live resource of that kind. */
function pathOf(route: RouteSpec): string {
  return `/v1${route.path.replace('{id}', route.idKind === undefined ? '' : ids[route.idKind.prefix]!)}`;
}

/**
 * The fields a route reads, from the served OpenAPI document, plus one it does not
 * document: the check covers whatever a client sends, before anything else reads it.
 */
function fieldsOf(operation: any): { body: string[]; query: string[] } {
  const documented = Object.keys(operation.requestBody?.content?.['application/json']?.schema?.properties ?? {});
  const query = (operation.parameters ?? []).filter((parameter: any) => parameter.in === 'query').map((parameter: any) => parameter.name as string);
  return { body: [...documented, 'undocumented'], query: [...query, 'undocumented'] };
}

describe('input text PostgreSQL cannot store', () => {
  it('is refused on every /v1 route, in the body and the query string, naming the field, and changes nothing', async () => {
    const document = (await (await fetch(`${test.url}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, any>> };
    // The event stream reads nothing but after_seq, an integer (invalid_cursor), and stores
    // nothing; the routes serving bytes (recordings, screenshots, files) read no query at all.
    const raw = ['/tasks/{id}/events', '/tasks/{id}/recording', '/sessions/{id}/recording', '/cdp_sessions/{id}/recording', '/tasks/{id}/steps/{seq}/screenshot', '/tasks/{id}/files/{file_id}'];
    const routes = (await servedRoutes(test.url)).filter((route) => !raw.includes(route.path));
    expect(routes.length).toBe(routeCatalogue.length - raw.length);
    const before = await databaseState();
    const refusals: string[] = [];

    for (const route of routes) {
      const call = apiClient(test.url, route.escalationBearer === true ? escalationBearer : key);
      const fields = fieldsOf(document.paths[route.path]![route.method.toLowerCase()]);
      const sendsBody = route.method === 'POST' || route.method === 'PATCH';
      for (const field of sendsBody ? fields.body : fields.query) {
        // A query string is percent-decoded as UTF-8, where a surrogate cannot be written:
        // it arrives as U+FFFD, which is storable. NUL (%00) is the one to refuse there.
        for (const bad of sendsBody ? [NUL, LONE_SURROGATE] : [NUL]) {
          const response = sendsBody
            ? await call(route.method, pathOf(route), { [field]: bad })
            : await call(route.method, `${pathOf(route)}?${new URLSearchParams({ [field]: bad })}`);
          expect({ route: `${route.method} ${route.path}`, field, status: response.status, error: response.body?.error }).toMatchObject({
            status: 400,
            error: { code: 'invalid_request', param: field, message: `Invalid value for ${field}: text must not contain NUL characters or unpaired UTF-16 surrogates.` },
          });
          refusals.push(`${route.method} ${route.path} ${field}`);
        }
      }
    }
    expect(refusals.length).toBeGreaterThan(60);
    expect(await databaseState()).toEqual(before);
  });

  it('names the element of a list and the key itself when that is where the text is', async () => {
    const submit = await api('POST', `/v1/devices/${ids.dev}/tasks`, { prompt: 'scroll down', allowed_domains: ['example.com', NUL] });
    expect(submit.body.error).toMatchObject({ code: 'invalid_request', param: 'allowed_domains.1' });
    const badKey = await api('PATCH', `/v1/webhook_endpoints/${ids.whe}`, { [`descr${'\u0000'}iption`]: 'x' });
    expect(badKey.body.error).toMatchObject({ code: 'invalid_request', param: 'descr\uFFFDiption' });
  });

  it('is refused by the console API with 400 and the field, before any change', async () => {
    const consoleKey = (await createOperator(test.service.services.db, 'Ada')).console_key;
    let cookie = '';
    const client = createTRPCClient<ConsoleAppRouter>({
      links: [
        httpLink({
          url: `${test.url}/console/api`,
          headers: () => ({ 'x-svc-console': '1', cookie }),
          fetch: async (url, init) => {
            const response = await fetch(url, init);
            cookie = response.headers.get('set-cookie')?.split(';', 1)[0] ?? cookie;
            return response;
          },
        }),
      ],
    });
    await client.signIn.mutate({ console_key: consoleKey });
    const refused = async (call: Promise<unknown>) => {
      const error = await call.then(
        () => null,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(TRPCClientError);
      const { data, meta } = error as TRPCClientError<ConsoleAppRouter>;
      return { status: (meta?.response as Response | undefined)?.status, ...data };
    };
    const organizationsBefore = (await test.service.services.db.select().from(organizations)).length;
    const before = await databaseState();

    expect(await refused(client.answerEscalation.mutate({ escalation_id: ids.esc!, answer: NUL, cleared: true }))).toMatchObject({ status: 400, code: 'invalid_request', param: 'answer' });
    expect(await refused(client.createOrganization.mutate({ name: LONE_SURROGATE, entitled: true, max_devices: null, max_device_seconds: null, escalation_url: null }))).toMatchObject({
      status: 400,
      code: 'invalid_request',
      param: 'name',
    });
    expect(await refused(client.createSpace.mutate({ org_id: tenant.orgId, name: NUL }))).toMatchObject({ status: 400, code: 'invalid_request', param: 'name' });

    expect((await test.service.services.db.select().from(organizations)).length).toBe(organizationsBefore);
    expect(await databaseState()).toEqual(before);
  });
});

describe('page text PostgreSQL cannot store', () => {
  it('is replaced with U+FFFD in the steps and the result of a task that succeeds', async () => {
    const device = await devices.create(tenant.spaceId);
    const submitted = await api('POST', `/v1/devices/${device}/tasks`, { prompt: `go to ${pageUrl} then return the text of "#t"` });
    expect(submitted.status).toBe(202);
    const done = await waitForTaskEnd(api, submitted.body.id, 30_000);
    expect(done).toMatchObject({ status: 'succeeded', result: 'Text\uFFFD\uFFFD' });

    const stream = await readStream(`${test.url}/v1/tasks/${submitted.body.id}/events`, key);
    const steps = stream.frames.filter((frame) => frame.event === 'step').map((frame) => JSON.parse(frame.data!));
    // Chromium itself turns control characters of a title into spaces; the unpaired
    // surrogate stays in it, and is replaced like the text's NUL.
    const title = 'Title \uFFFD';
    expect(steps.map((step) => [step.action, step.title, step.note])).toEqual([
      [`navigate ${pageUrl}`, title, `go to ${pageUrl}`],
      ['extract text of "#t"', title, 'return the text of "#t"'],
      ['answer', title, 'Text\uFFFD\uFFFD'],
    ]);
  });
});

describe('a failed query in the log', () => {
  it('holds neither the statement nor its parameters', async () => {
    const parameter = `private-${Date.now()}`;
    const failure = await test.service.services.db.execute(sql`select ${parameter}::uuid`).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    const lines: string[] = [];
    createLogger('info', { write: (line: string) => lines.push(line) }).error({ err: failure }, 'query failed');
    const logged = JSON.parse(lines.join(''));
    expect(logged.err.type).toBe('DrizzleQueryError');
    expect(logged.err.message).toBe('Failed query: data exception 22P02 in string_to_uuid');
    expect(lines.join('')).not.toContain(parameter);
    expect(lines.join('')).not.toContain('::uuid');
  });
});
