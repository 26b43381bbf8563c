import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OperatorClient, type LiveFrame, type LiveReconnect } from '@browser-device-operator/sdk';
import { allScopes, createTenant, startTestService, type TestService, type TestTenant } from '../../test/support/test-service';

// The SDK's live view across a restart of the real service (real PostgreSQL, real
// Chromium): the service closes the socket with 1012, the view reconnects by itself with
// the same token to the next instance on the same database and data directory, and frames
// resume.

let test: TestService;
let tenant: TestTenant;
let operator: OperatorClient;

beforeAll(async () => {
  test = await startTestService();
  tenant = await createTenant(test);
  operator = new OperatorClient({ apiKey: await tenant.key(allScopes), baseUrl: test.url });
});
afterAll(async () => {
  await test?.stop();
});

describe('sessions.connect() across a restart', () => {
  it('reconnects by itself on 1012, reports it on onReconnect, and yields frames again', async () => {
    const device = await operator.devices.create({ space_id: tenant.spaceId });
    const session = await operator.sessions.create(device.id);
    // ws_url is built from OPERATOR_PUBLIC_URL; the test server listens on another port (kept across the restart).
    const view = operator.sessions.connect({ ...session, ws_url: `${test.url.replace('http', 'ws')}${new URL(session.ws_url).pathname}` });
    const reconnects: LiveReconnect[] = [];
    view.onReconnect = (event) => reconnects.push(event);
    const frames = view[Symbol.asyncIterator]();
    expect((await view.ready).session_id).toBe(session.id);
    expect((await frames.next()).done).toBe(false);

    await test.restart();
    // A frame of the next instance: the view came back by itself. (The page is blank, so
    // each instance sends one frame, the latest, to a new viewer.)
    const isBack = () => reconnects.some((event) => event.type === 'reconnected');
    let frame: IteratorResult<LiveFrame>;
    do frame = await frames.next();
    while (!frame.done && !isBack());
    expect(frame.done).toBe(false);
    expect(frame.value.format).toBe('jpeg');
    expect(reconnects[0]).toMatchObject({ type: 'reconnecting', attempt: 1 });
    expect(reconnects[0]!.type === 'reconnecting' && reconnects[0]!.delayMs).toBeLessThanOrEqual(250);
    expect(reconnects.at(-1)).toEqual({ type: 'reconnected', attempt: reconnects.length - 1 });
    expect(view.closeCode).toBeUndefined();

    // Any other close ends the view as before.
    await operator.sessions.revoke(session.id);
    expect((await frames.next()).done).toBe(true);
    expect({ code: view.closeCode, reason: view.closeReason }).toEqual({ code: 4410, reason: 'session_expired' });
    await operator.devices.delete(device.id);
  });
});
