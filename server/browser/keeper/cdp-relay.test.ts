import { expect, it } from 'vitest';
import { CdpRelay } from './cdp-relay';

it("gives each client's commands the keeper's ids and the answers their client's ids back", () => {
  const relay = new CdpRelay();
  const first = JSON.parse(relay.fromClient(1, '{"id":1,"method":"Browser.getVersion"}')!);
  const second = JSON.parse(relay.fromClient(1, '{"id":2,"method":"Target.getTargets","sessionId":"S"}')!);
  expect(first).toEqual({ id: 1, method: 'Browser.getVersion' });
  expect(second).toEqual({ id: 2, method: 'Target.getTargets', sessionId: 'S' });
  // A restarted service numbers from 1 again; its command gets a fresh keeper id.
  const again = JSON.parse(relay.fromClient(2, '{"id":1,"method":"Browser.getVersion"}')!);
  expect(again.id).toBe(3);

  expect(relay.fromBrowser('{"id":3,"result":{"product":"x"}}')).toEqual({ to: 'client', client: 2, message: '{"id":1,"result":{"product":"x"}}' });
  expect(relay.fromBrowser('{"id":2,"result":{},"sessionId":"S"}')).toEqual({ to: 'client', client: 1, message: '{"id":2,"result":{},"sessionId":"S"}' });
  // Answered once; a second answer with the same id has no owner.
  expect(relay.fromBrowser('{"id":3,"result":{}}')).toEqual({ to: 'nobody' });
  // An answer written with its id elsewhere is parsed in full.
  const late = JSON.parse(relay.fromClient(2, '{"id":7,"method":"X"}')!).id as number;
  const reordered = relay.fromBrowser(`{"result":{},"id":${late}}`);
  expect(reordered).toMatchObject({ to: 'client', client: 2 });
  expect(JSON.parse((reordered as { message: string }).message)).toEqual({ result: {}, id: 7 });
  expect(relay.fromClient(1, 'not json')).toBeNull();
  expect(relay.fromClient(1, '{"method":"no id"}')).toBeNull();
});

it("drops the answers to a gone client's commands and the keeper's own, and passes events to whoever is connected", () => {
  const relay = new CdpRelay();
  relay.fromClient(1, '{"id":10,"method":"Page.navigate"}');
  const internal = JSON.parse(relay.internal('Browser.close')).id as number;
  relay.clientGone(1);
  expect(relay.fromBrowser('{"id":1,"result":{}}')).toEqual({ to: 'nobody' });
  expect(relay.fromBrowser(`{"id":${internal},"result":{}}`)).toEqual({ to: 'nobody' });
  const event = '{"method":"Page.loadEventFired","params":{"timestamp":1},"sessionId":"S"}';
  expect(relay.fromBrowser(event)).toEqual({ to: 'current', message: event });
});

it('tracks root sessions and, when the client goes, detaches them and turns root auto-attach and discovery off', () => {
  const relay = new CdpRelay();
  const attached = (sessionId: string, parent?: string) =>
    JSON.stringify({ method: 'Target.attachedToTarget', params: { sessionId, targetInfo: { targetId: 'T', type: 'page' }, waitingForDebugger: true }, ...(parent ? { sessionId: parent } : {}) });
  relay.fromBrowser(attached('A'));
  relay.fromBrowser(attached('B'));
  relay.fromBrowser(attached('child', 'A')); // ends with A
  relay.fromBrowser(JSON.stringify({ method: 'Target.detachedFromTarget', params: { sessionId: 'B' } }));
  expect(relay.sessions).toEqual(['A']);

  const cleanup = relay.clientGone(1).map((command) => JSON.parse(command) as { method: string; params: Record<string, unknown> });
  expect(cleanup.map((command) => [command.method, command.params])).toEqual([
    ['Target.detachFromTarget', { sessionId: 'A' }],
    ['Target.setAutoAttach', { autoAttach: false, waitForDebuggerOnStart: false, flatten: true }],
    ['Target.setDiscoverTargets', { discover: false }],
  ]);
});
