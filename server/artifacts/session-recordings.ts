import type { SessionRow } from '../domain/sessions/session-resource';
import type { ActiveRecording, Recorder } from './recorder';

/**
 * A live-view session is recorded while at least one of its sockets is open on the
 * device's host (the live-view gateway tells which open and close): the first socket
 * starts a recording, the last one to close finishes it (a session watched again later
 * gets another; GET /v1/sessions/{id}/recording serves the latest).
 */
export class SessionRecordings {
  readonly #open = new Map<string, { sockets: number; recording: Promise<ActiveRecording> }>();

  constructor(private readonly recorder: Pick<Recorder, 'start'>) {}

  socketOpened(session: Pick<SessionRow, 'id' | 'orgId' | 'deviceId'>): void {
    let entry = this.#open.get(session.id);
    if (entry === undefined) {
      entry = { sockets: 0, recording: this.recorder.start({ kind: 'session', id: session.id, orgId: session.orgId }, session.deviceId) };
      this.#open.set(session.id, entry);
    }
    entry.sockets += 1;
  }

  socketClosed(sessionId: string): void {
    const entry = this.#open.get(sessionId);
    if (entry === undefined) return;
    entry.sockets -= 1;
    if (entry.sockets > 0) return;
    this.#open.delete(sessionId);
    // Recorder.stopAll() waits for it at shutdown; it never throws.
    void entry.recording.then((recording) => recording.stop());
  }
}
