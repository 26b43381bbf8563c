import { randomUUID } from 'node:crypto';
import { access, mkdir, readFile, rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import type { Db } from '../../db/client';
import type { LiveFrame } from '../browser';
import type { DatabaseAvailability } from '../core/database-availability';
import type { Logger } from '../core/log';
import {
  insertRecording,
  interruptedRecordings,
  markRecordingFailed,
  markRecordingReady,
  RECORDING_CONTENT_TYPE,
  type RecordingRow,
  type RecordingSubjectRef,
} from '../domain/recordings/recording-rows';
import { startSpawner } from '../os/spawner/child-spawner';
import type { RetryingWrites } from '../storage';
import { EncodeQueue } from './encode-queue';
import { encodeFrames } from './frame-encoder';
import { readFrameSpool } from './frame-spool';
import { FrameTimeline, jpegOf } from './frame-timeline';
import { jpegSize } from './jpeg-size';
import { probeVideo } from './probe-video';
import { RecordingFrames } from './recording-frames';

/** The device's screencast, shared with live-view sockets (server/gateway/device-views.ts). */
export interface FrameSource {
  watchFrames(deviceId: string, listener: (frame: LiveFrame) => void): Promise<FrameWatch>;
}

/** One listener's frames of a device's screencast. */
export interface FrameWatch {
  stop(): void;
  /** Asks the page for a frame of how it is now (LiveView.repaint). */
  repaint(): Promise<void>;
}

export interface RecorderDeps {
  db: Db;
  /** A finished recording's row waits out a database outage (the stop of the process ends the wait). */
  databaseAvailability: DatabaseAvailability;
  /** The object store, through writes that outlast its outages. */
  writes: RetryingWrites;
  frames: FrameSource;
  hostId: string;
  /** Videos are written under `<dataDir>/recordings/` until they are finished and stored. */
  dataDir: string;
  fps: number;
  /** Recordings that end within this are encoded after their end; longer ones from then on, as they go (0: always as they go). */
  encodeLiveAfterMs: number;
  log: Logger;
}

/** A recording in progress; stop() ends it, its video encoded and stored then or in the encode queue (never throws). */
export interface ActiveRecording {
  stop(): Promise<void>;
  /** The frames it saw (frame-timeline.ts): a step's picture is one of them. */
  frameBetween: FrameTimeline['frameBetween'];
  shown: FrameTimeline['shown'];
}

// How long recovery waits for an ffmpeg a crashed process left finishing its file.
const ORPHAN_WAIT_MS = 10_000;

// How long a stop, and a deleted device's browser (untilFramed), wait for the first frame
// of a recording that has none yet. A view's first frame of a still page is its fallback
// picture, 300 ms after it opened on a quiet host; under a full test run on a saturated
// 2-core host it came later than a second. Neither wait holds anyone's answer.
const FIRST_FRAME_WAIT_MS = 5_000;

// Encodings waiting past which a new recording is encoded as it goes: on a host that ends
// recordings faster than it encodes them (saturated for long), the backlog on disk and a
// client's wait for a video stay bounded, and the host falls back to encoding beside the runs.
const MAX_ENCODINGS_WAITING = 16;

// How long a recording's encoding waits after its subject ended. A recording ends with its
// subject, in the moment its client makes its next request (a DELETE right after a CDP
// client's disconnect, the next task after a task's end): ffmpeg's start and the first
// frames' CPU would share that moment with it. bench:lifecycle's DELETE p50 on a 2-core
// Xeon, 2026-12-07: 17 and 20 ms with this wait (14 to 18 with 300 ms), 20 to 31 without.
const ENCODE_AFTER_END_MS = 150;

// How long a stop of the service lets the encodings waiting finish; the rest are the next start's.
const ENCODINGS_STOP_WAIT_MS = 10_000;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

const NOTHING: ActiveRecording = { stop: async () => undefined, frameBetween: async () => null, shown: async () => undefined };

/**
 * Records what a device's page shows while a subject (a task run, a live-view session,
 * a CDP session) runs: the shared screencast's frames are kept in this host's data
 * directory (recording-frames.ts) and encoded by ffmpeg (frame-encoder.ts) after the
 * subject ends, one encoding after another (`encodeLiveAfterMs` and longer: as they
 * come); the video goes to the object store and its row in `recordings` becomes `ready`.
 * A recording that cannot start or finish is logged and marked `failed`; it never fails
 * its subject.
 *
 * A process that dies mid-recording leaves its row `recording` and its frames: a spool
 * (encoded by the next start of the same host, `recover`), or an MP4 that ffmpeg finishes
 * when its stdin closes (stored by `recover` as it is, or marked `failed` when nothing
 * readable is there).
 */
export class Recorder {
  readonly #deps: RecorderDeps;
  readonly #directory: string;
  readonly #active = new Set<ActiveRecording>();
  /** Recordings starting or in progress, by device, until they have a frame or end (untilFramed). */
  readonly #awaitingFirstFrame = new Set<{ deviceId: string; arrived: Promise<void> }>();
  // Half the cores: encodings are background work beside the browsers.
  readonly #encodings = new EncodeQueue(Math.floor(availableParallelism() / 2), ENCODE_AFTER_END_MS);

  constructor(deps: RecorderDeps) {
    this.#deps = deps;
    this.#directory = path.join(deps.dataDir, 'recordings');
  }

  /**
   * Starts recording `subject` from the page of `deviceId`, whose browser runs in this
   * process: by default the device's shared screencast (the agent's page); `frames` may
   * name another source (a CDP connection's recording follows the pages its client opens).
   */
  async start(subject: RecordingSubjectRef, deviceId: string, frames: FrameSource = this.#deps.frames): Promise<ActiveRecording> {
    const { db, log } = this.#deps;
    const recordingId = randomUUID();
    const file = path.join(this.#directory, `${recordingId}.mp4`);
    let kept: RecordingFrames | null = null;
    let stopped = false;
    let watch: FrameWatch | null = null;
    const timeline = new FrameTimeline(async () => watch?.repaint());
    let firstFrame: () => void = () => undefined;
    const firstFrameArrived = new Promise<void>((resolve) => {
      firstFrame = resolve;
    });
    // untilFramed() waits for the first frame, or for a recording that ends without one
    // (it resolves firstFrameArrived then too: nothing more will come).
    const awaiting = { deviceId, arrived: firstFrameArrived };
    this.#awaitingFirstFrame.add(awaiting);
    void firstFrameArrived.then(() => this.#awaitingFirstFrame.delete(awaiting));
    // Frames are kept on disk only once the row exists (recover() finds a recording by its
    // row); the last frame before it is the video's first.
    let rowWritten = false;
    let lastBeforeRow: LiveFrame | null = null;
    const keep = (frame: LiveFrame) => {
      const jpeg = jpegOf(frame);
      if (kept !== null) return kept.push(jpeg);
      // The video is the size of the first frame (800 px wide for a recording alone, 1280
      // while people watch; live-view.ts); later frames of another size are scaled to it.
      const { width, height } = jpegSize(jpeg) ?? { width: frame.width, height: frame.height };
      // The spool and the pid file: found again by recover() should this process die before stop().
      const encodeLiveAfterMs = this.#encodings.size >= MAX_ENCODINGS_WAITING ? 0 : this.#deps.encodeLiveAfterMs;
      kept = new RecordingFrames({ file, ...recordingFiles(file), fps: this.#deps.fps, width, height, encodeLiveAfterMs, log }, jpeg);
    };
    const onFrame = (frame: LiveFrame) => {
      timeline.see(frame);
      if (stopped) return;
      firstFrame();
      if (rowWritten) keep(frame);
      else lastBeforeRow = frame;
    };
    // The screencast opens while the row is written: a run's first action waits for both.
    const watching = frames.watchFrames(deviceId, onFrame);
    watching.catch(() => undefined); // its failure is read below, once the row is written
    let row: RecordingRow;
    try {
      await mkdir(this.#directory, { recursive: true, mode: 0o700 });
      row = await insertRecording(db, subject, recordingId, this.#deps.hostId);
    } catch (error) {
      log.error({ err: error, subject: subject.kind, subjectId: subject.id }, 'could not start a recording');
      stopped = true;
      void watching.then((opened) => opened.stop(), () => undefined);
      firstFrame();
      return NOTHING;
    }
    rowWritten = true;
    if (lastBeforeRow !== null) keep(lastBeforeRow);
    try {
      watch = await watching;
    } catch (error) {
      log.warn({ err: error, recordingId }, 'recording got no screencast; marked failed');
      await markRecordingFailed(db, recordingId).catch(() => undefined);
      firstFrame();
      return NOTHING;
    }
    let stopping: Promise<void> | null = null;
    const active: ActiveRecording = {
      stop: () => {
        stopping ??= (async () => {
          // A run shorter than the screencast's first frame (the live view sends one
          // within 300 ms even of a still page) still gets its picture.
          if (kept === null) await Promise.race([firstFrameArrived, delay(FIRST_FRAME_WAIT_MS)]);
          stopped = true;
          // Frames keep coming for the waits on frames (a step's effect painting) while
          // the frames end: those waits end with the video, at no cost of their own.
          const stopWatching = () => {
            timeline.end();
            watch.stop();
          };
          const recorded = kept as RecordingFrames | null;
          if (recorded === null) {
            stopWatching();
            await markRecordingFailed(db, recordingId).catch((error: unknown) => log.error({ err: error, recordingId }, 'could not mark a recording failed'));
            return;
          }
          const ended = await recorded.end();
          stopWatching();
          if (ended.kind === 'spooled') return this.#encodeLater(row);
          if (ended.kind === 'failed') {
            log.warn({ recordingId, reason: ended.diagnostics }, 'a recording lost its frames; marked failed');
            await markRecordingFailed(db, recordingId).catch((error: unknown) => log.error({ err: error, recordingId }, 'could not mark a recording failed'));
            await removeRecordingFiles(file);
            return;
          }
          if (!ended.video.ok) log.warn({ recordingId, ffmpeg: ended.video.diagnostics }, 'ffmpeg ended with an error; keeping what it wrote');
          // A clean end needs no ffprobe (a second or more on a busy machine): the encoder knows.
          await this.#finish(row, file, ended.video.ok ? ended.video : null);
        })().finally(() => {
          this.#active.delete(active);
          firstFrame();
        });
        return stopping;
      },
      frameBetween: (since, until) => timeline.frameBetween(since, until),
      shown: (changedAt, endedBy) => timeline.shown(changedAt, endedBy),
    };
    this.#active.add(active);
    return active;
  }

  /**
   * Resolves once every recording of the device's page that is starting or in progress
   * has its first frame, or has ended (FIRST_FRAME_WAIT_MS at most). A deleted device's
   * browser waits for it before it is killed: a recording with no frame keeps no video,
   * and a connection deleted with its device within moments of its start (before its page
   * painted, or before the view's fallback picture) would otherwise have none.
   */
  async untilFramed(deviceId: string): Promise<void> {
    const arrivals = [...this.#awaitingFirstFrame].filter((awaiting) => awaiting.deviceId === deviceId).map((awaiting) => awaiting.arrived);
    if (arrivals.length === 0) return;
    await Promise.race([Promise.all(arrivals), delay(FIRST_FRAME_WAIT_MS)]);
  }

  /**
   * Finishes every recording in progress (at shutdown, after the runs stopped), and gives
   * the encodings waiting ENCODINGS_STOP_WAIT_MS; what is left then, the next start encodes.
   */
  async stopAll(): Promise<void> {
    await Promise.all([...this.#active].map((active) => active.stop()));
    await this.#encodings.stop(ENCODINGS_STOP_WAIT_MS);
  }

  /** Makes ready what a recording's start needs (the spawner that starts ffmpeg), off any task's path. */
  prepare(): void {
    startSpawner();
  }

  /**
   * Stores, or marks failed, what this host's previous process left recording: frames it
   * kept are encoded again from the start (an encoding it had begun is not trusted), a
   * video ffmpeg finished by itself is stored as it is.
   */
  async recover(): Promise<void> {
    for (const row of await interruptedRecordings(this.#deps.db, this.#deps.hostId)) {
      const file = path.join(this.#directory, `${row.id}.mp4`);
      await waitForOrphanEncoder(file);
      const spooled = await access(recordingFiles(file).spoolFile).then(
        () => true,
        () => false,
      );
      if (spooled) this.#encodeLater(row);
      else await this.#finish(row, file);
    }
  }

  /**
   * Encodes a recording's kept frames once the encodings before it are done, then stores
   * it. A stop of the service meanwhile leaves the frames and the row to the next start.
   */
  #encodeLater(row: RecordingRow): void {
    const { log, db } = this.#deps;
    const file = path.join(this.#directory, `${row.id}.mp4`);
    const { spoolFile, pidFile } = recordingFiles(file);
    this.#encodings.add(async (stopping) => {
      const spooled = await readFrameSpool(spoolFile).catch(() => null);
      const first = spooled?.frames[0];
      if (spooled === null || first === undefined) {
        log.warn({ recordingId: row.id }, 'a recording\'s kept frames are unreadable; marked failed');
        await this.#deps.databaseAvailability.retryWhileUnreachable(() => markRecordingFailed(db, row.id)).catch(() => undefined);
        await removeRecordingFiles(file);
        return;
      }
      const size = jpegSize(first) ?? { width: 800, height: 600 };
      const video = await encodeFrames({ file, pidFile, fps: spooled.fps, ...size }, spooled.frames, stopping);
      if (stopping.aborted) return;
      // The video holds every frame now: a restart from here stores it rather than encoding again.
      if (video.ok) await rm(spoolFile, { force: true });
      else log.warn({ recordingId: row.id, ffmpeg: video.diagnostics }, 'ffmpeg ended with an error; keeping what it wrote');
      await this.#finish(row, file, video.ok ? video : null);
    });
  }

  /**
   * The file's video goes to the store and the row becomes `ready`; or the row `failed`.
   * While the store refuses it, the file waits here, the row stays `recording`, and the
   * write is tried again (RetryingWrites); a process stopped meanwhile leaves both to the
   * next start's recover().
   */
  async #finish(row: RecordingRow, file: string, known: { durationMs: number; width: number; height: number } | null = null): Promise<void> {
    const { db, writes, log, databaseAvailability } = this.#deps;
    // The video in the store and its row `recording` must not end with the file removed:
    // the row is written once the database answers, and the file goes only after it.
    const untilWritten = (write: () => Promise<void>) => databaseAvailability.retryWhileUnreachable(write);
    try {
      const video = known ?? (await probeVideo(file));
      if (video !== null) {
        await writes.put(row.objectKey, { file }, RECORDING_CONTENT_TYPE, {
          stored: async (object) => {
            await untilWritten(() => markRecordingReady(db, row.id, { durationMs: video.durationMs, sizeBytes: object.size, width: video.width, height: video.height }));
            await removeRecordingFiles(file);
          },
          gaveUp: async (why) => {
            if (why === 'stopping') return;
            await untilWritten(() => markRecordingFailed(db, row.id));
            await removeRecordingFiles(file);
          },
        });
        return;
      }
      log.warn({ recordingId: row.id }, 'a recording left no readable video; marked failed');
      await untilWritten(() => markRecordingFailed(db, row.id));
    } catch (error) {
      // Stopped while the database was away: the row and the file are the next start's (recover()).
      if (databaseAvailability.absorb(error)) return;
      log.error({ err: error, recordingId: row.id }, 'could not store a recording; marked failed');
      await markRecordingFailed(db, row.id).catch(() => undefined);
    }
    await removeRecordingFiles(file);
  }
}

/** Beside a recording's video: its kept frames, and its encoder's pid. */
function recordingFiles(file: string): { spoolFile: string; pidFile: string } {
  return { spoolFile: `${file}.frames`, pidFile: `${file}.pid` };
}

/** The video file, its kept frames and the pid file of its encoder. */
async function removeRecordingFiles(file: string): Promise<void> {
  const { spoolFile, pidFile } = recordingFiles(file);
  await rm(file, { force: true });
  await rm(spoolFile, { force: true });
  await rm(pidFile, { force: true });
}

/**
 * ffmpeg finishes its file by itself once the dead process's pipe closed; should it still
 * run (its pid file names it and its command line names the file), it gets a moment,
 * then SIGKILL, so no encoder outlives its recording.
 */
async function waitForOrphanEncoder(file: string): Promise<void> {
  const pid = Number(await readFile(`${file}.pid`, 'utf8').catch(() => ''));
  if (!Number.isInteger(pid) || pid <= 0) return;
  const isOurs = async () => (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).includes(file);
  const deadline = Date.now() + ORPHAN_WAIT_MS;
  while ((await isOurs()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
  if (await isOurs()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}
