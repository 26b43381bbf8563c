// The keeper's side of relaying CDP between one client (a service) at a time and the
// browser. Self-contained (the keeper process imports it under type stripping).
//
// Ids: each client numbers its commands from 1, and a service that restarts starts again
// at 1, so the browser would answer the new client's command 5 with the old client's
// answer still in flight. Every command gets the keeper's own id on the way in and its
// client's id back on the way out; an answer for a client that is gone is dropped.
//
// Leftovers: what a client switched on at the browser's root stays when it goes, and
// would hurt while no service is there: auto-attach with waitForDebuggerOnStart leaves
// every new page paused for a debugger that never comes, and the Fetch interception of a
// session nobody answers hangs its requests. So the relay notes the flatten-mode
// sessions attached at the root (Target.attachedToTarget without a parent session; a
// root session's children end with it) and, when its client goes, detaches them and
// turns root auto-attach and discovery off.

/** Where a message from the browser goes. */
export type RelayDelivery =
  | { to: 'client'; client: number; message: string }
  /** An event: for whichever client is connected, if any. */
  | { to: 'current'; message: string }
  | { to: 'nobody' };

type Pending = { client: number; id: number } | { internal: true };

const ATTACHED = '"Target.attachedToTarget"';
const DETACHED = '"Target.detachedFromTarget"';
/** How Chromium starts an answer: the id first. Anything else is parsed in full. */
const ANSWER_START = /^\{"id":(\d+)([,}])/;

export class CdpRelay {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly rootSessions = new Set<string>();

  /** The client's command with the keeper's id in place of its own; null for a message that is not a command. */
  fromClient(client: number, message: string): string | null {
    let command: Record<string, unknown>;
    try {
      command = JSON.parse(message) as Record<string, unknown>;
    } catch {
      return null;
    }
    if (typeof command !== 'object' || command === null || typeof command.id !== 'number') return null;
    const id = this.nextId++;
    this.pending.set(id, { client, id: command.id });
    return JSON.stringify({ ...command, id });
  }

  /** A command of the keeper's own, whose answer no client sees. */
  internal(method: string, params: Record<string, unknown> = {}, sessionId?: string): string {
    const id = this.nextId++;
    this.pending.set(id, { internal: true });
    return JSON.stringify(sessionId === undefined ? { id, method, params } : { id, method, params, sessionId });
  }

  /** Where the browser's message goes, with the client's id put back into an answer. */
  fromBrowser(message: string): RelayDelivery {
    const start = ANSWER_START.exec(message);
    if (start !== null) return this.answer(Number(start[1]), message, start[0].length, start[2]!);
    if (message.includes(ATTACHED) || message.includes(DETACHED)) this.noteSession(message);
    if (!message.startsWith('{"method"')) {
      // An answer whose id Chromium did not write first: rare, parsed in full.
      const parsed = parseObject(message);
      if (parsed !== null && typeof parsed.id === 'number') {
        const owner = this.pending.get(parsed.id);
        this.pending.delete(parsed.id);
        if (owner === undefined || 'internal' in owner) return { to: 'nobody' };
        return { to: 'client', client: owner.client, message: JSON.stringify({ ...parsed, id: owner.id }) };
      }
    }
    return { to: 'current', message };
  }

  /** The commands that undo what a client left switched on; the client's pending answers are forgotten. */
  clientGone(client: number): string[] {
    for (const [id, owner] of this.pending) if ('client' in owner && owner.client === client) this.pending.delete(id);
    const commands = [...this.rootSessions].map((sessionId) => this.internal('Target.detachFromTarget', { sessionId }));
    commands.push(this.internal('Target.setAutoAttach', { autoAttach: false, waitForDebuggerOnStart: false, flatten: true }));
    commands.push(this.internal('Target.setDiscoverTargets', { discover: false }));
    return commands;
  }

  /** Root sessions attached now (for tests and the keeper's own bookkeeping). */
  get sessions(): string[] {
    return [...this.rootSessions];
  }

  private answer(keeperId: number, message: string, prefixLength: number, separator: string): RelayDelivery {
    const owner = this.pending.get(keeperId);
    this.pending.delete(keeperId);
    if (owner === undefined || 'internal' in owner) return { to: 'nobody' };
    return { to: 'client', client: owner.client, message: `{"id":${owner.id}${separator}${message.slice(prefixLength)}` };
  }

  private noteSession(message: string): void {
    const event = parseObject(message);
    if (event === null || event.sessionId !== undefined) return; // a child session: it ends with its root
    const params = event.params as { sessionId?: unknown } | undefined;
    if (typeof params?.sessionId !== 'string') return;
    if (event.method === 'Target.attachedToTarget') this.rootSessions.add(params.sessionId);
    else if (event.method === 'Target.detachedFromTarget') this.rootSessions.delete(params.sessionId);
  }
}

function parseObject(message: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(message);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
