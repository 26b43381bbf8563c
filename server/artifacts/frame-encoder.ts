import { writeFileSync } from 'node:fs';
import { PeriodicTimer } from '../domain/periodic-timer';
import { spawnPiped, type PipedChild } from '../os/spawner/child-spawner';

const FFMPEG = '/usr/bin/ffmpeg';
/**
 * ffmpeg runs as background work: its start (40 to 140 ms of CPU, most of it loading its
 * libraries) and its encoding would compete with the pages, the browsers and the service;
 * at a niceness of 10 they go first, and ffmpeg, far below a core at a recording's few
 * frames a second, keeps up in the time they leave it.
 */
const ENCODER_NICENESS = 10;
// Past this, a stopping ffmpeg is killed: the file it leaves is still a fragmented MP4 (up
// to its last fragment). Generous: on a saturated machine, ten encoders finishing at once
// were seen to need more than 20 s.
const STOP_TIMEOUT_MS = 60_000;
// Frames written at most in one tick to catch up after the event loop stalled.
const MAX_CATCH_UP_FRAMES = 50;
// Bytes of frames waiting in ffmpeg's pipe past which due frames wait their turn: an
// encoder that falls behind (starved on a saturated host) or stops must not grow the
// service's memory without end. Once it reads again they follow, MAX_CATCH_UP_FRAMES a
// tick, so the video keeps the wall clock's time.
const MAX_PENDING_BYTES = 8 * 1024 * 1024;

export interface EncoderOptions {
  /** Output file (fragmented MP4). */
  file: string;
  /** Where ffmpeg's pid goes once it runs, for the next start to find it after a crash. */
  pidFile: string;
  /** Frames per second of the video: the cap on what is kept of the screencast. */
  fps: number;
  /** Output size in pixels; made even (H.264's 4:2:0 needs it). */
  width: number;
  height: number;
}

/** How a recording's frames turn into its video: what ffmpeg is asked, and its start. */
function startFfmpeg(options: EncoderOptions): Promise<PipedChild> {
  const width = even(options.width);
  const height = even(options.height);
  // prettier-ignore
  const args = [
    '-hide_banner', '-loglevel', 'error', '-y',
    '-f', 'image2pipe', '-framerate', String(options.fps), '-c:v', 'mjpeg', '-i', 'pipe:0',
    '-vf', `scale=${width}:${height}:force_original_aspect_ratio=decrease,pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2,format=yuv420p`,
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-crf', '32', '-g', String(options.fps * 2),
    '-threads', '1',
    '-movflags', 'frag_keyframe+empty_moov+default_base_moof', '-f', 'mp4', options.file,
  ];
  return spawnPiped(FFMPEG, args, { niceness: ENCODER_NICENESS }).then((ffmpeg) => {
    // A dead ffmpeg makes writes fail with EPIPE; its end reports it.
    ffmpeg.stdin.on('error', () => undefined);
    try {
      writeFileSync(options.pidFile, String(ffmpeg.pid), { mode: 0o600 });
    } catch {
      // Without it, recovery still finishes the file; it only cannot wait for this ffmpeg.
    }
    return ffmpeg;
  });
}

/** How an encoder ended: the video's length and size, and whether ffmpeg finished it cleanly. */
export interface EncodedVideo {
  durationMs: number;
  width: number;
  height: number;
  ok: boolean;
  /** What went wrong, with ffmpeg's own words (for the log). */
  diagnostics: string;
}

/** Waits for ffmpeg to finish its file once its input ended (STOP_TIMEOUT_MS at most). */
async function untilEncoded(ffmpeg: PipedChild, options: EncoderOptions, frames: number, before: string): Promise<EncodedVideo> {
  const timer = setTimeout(() => killIfRunning(ffmpeg.pid), STOP_TIMEOUT_MS);
  const end = await ffmpeg.exited;
  clearTimeout(timer);
  const ok = 'code' in end && end.code === 0;
  let diagnostics = before + ('stderr' in end ? end.stderr : '');
  if (!ok) diagnostics = `${'error' in end ? end.error : `exited with ${end.code ?? end.signal}`}; ${diagnostics}`;
  return { ...videoOf(options, frames), ok, diagnostics: diagnostics.trim() };
}

function videoOf(options: EncoderOptions, frames: number): { durationMs: number; width: number; height: number } {
  return { durationMs: Math.round((frames * 1000) / options.fps), width: even(options.width), height: even(options.height) };
}

/**
 * Encodes frames kept until now (frame-spool.ts), as fast as ffmpeg takes them: the video
 * of a recording that ended. `abort` kills ffmpeg (a stop of the service): the result is
 * then not ok, and the frames stay where they were for the next start.
 */
export async function encodeFrames(options: EncoderOptions, frames: readonly Buffer[], abort: AbortSignal): Promise<EncodedVideo> {
  let ffmpeg: PipedChild;
  try {
    ffmpeg = await startFfmpeg(options);
  } catch (error) {
    return { ...videoOf(options, 0), ok: false, diagnostics: `could not start: ${error instanceof Error ? error.message : String(error)}` };
  }
  const kill = () => killIfRunning(ffmpeg.pid);
  abort.addEventListener('abort', kill, { once: true });
  try {
    for (const frame of frames) {
      if (abort.aborted || ffmpeg.stdin.destroyed) break;
      if (!ffmpeg.stdin.write(frame)) await new Promise((resolve) => ffmpeg.stdin.once('drain', resolve).once('close', resolve));
    }
    ffmpeg.stdin.end();
    const encoded = await untilEncoded(ffmpeg, options, frames.length, '');
    return abort.aborted ? { ...encoded, ok: false, diagnostics: `stopped; ${encoded.diagnostics}` } : encoded;
  } finally {
    abort.removeEventListener('abort', kill);
  }
}

/** Where a live encoder starts: frames kept before it (a spool's), and their first tick's time. */
export interface EncoderBacklog {
  /** When tick 0 was due. */
  startedAt: number;
  /** The frames of ticks 0, 1, ...: written first, in order. */
  frames: readonly Buffer[];
}

/**
 * Turns the screencast's JPEG frames into an H.264 video with Debian's ffmpeg, as they come.
 *
 * The screencast sends frames only when the page repaints, so a tick at `fps` writes the
 * latest frame as many times as wall-clock time says frames are due: the video has a
 * constant rate and its timeline is the real one (a page that sat still for 10 s shows
 * 10 s). ffmpeg reads them from its stdin (`image2pipe`, MJPEG decoder) and encodes with
 * libx264 `ultrafast` at CRF 32, the cheapest preset: at 5 fps a 1280×720 page costs a
 * few percent of one core.
 *
 * The MP4 is fragmented (a `moof` per keyframe, one every 2 s), so whatever ffmpeg wrote
 * before a crash is a playable video without its end. ffmpeg ends by itself when its
 * stdin closes: when this process stops, even by SIGKILL, the pipe closes and ffmpeg
 * finishes the file and exits; no ffmpeg outlives the service for long.
 *
 * A recording that kept its frames in a spool first (recorder.ts) starts its encoder with
 * them as the backlog: they are written first, and the wall clock's ticks go on after them.
 *
 * ffmpeg is started by the spawner (child-spawner.ts), so a recording's start costs the
 * event loop nothing; frames due before it runs are written once it does, as after a stall.
 */
export class FrameEncoder {
  readonly #started: Promise<PipedChild | null>;
  readonly #tick: PeriodicTimer;
  readonly #startedAt: number;
  readonly #fps: number;
  readonly #options: EncoderOptions;
  readonly #backlog: readonly Buffer[];
  /** Resolves once the backlog is in ffmpeg's pipe (not this process's memory). */
  readonly backlogWritten: Promise<void>;
  #backlogWritten: () => void = () => undefined;
  #backlogDone = false;
  #ffmpeg: PipedChild | null = null;
  #latest: Buffer;
  #written = 0;
  #stopping: Promise<EncodedVideo> | null = null;
  #stderr = '';

  constructor(options: EncoderOptions, latest: Buffer, backlog: EncoderBacklog = { startedAt: Date.now(), frames: [] }) {
    this.#options = options;
    this.#fps = options.fps;
    this.#latest = latest;
    this.#startedAt = backlog.startedAt;
    this.#backlog = backlog.frames;
    this.backlogWritten = new Promise((resolve) => {
      this.#backlogWritten = resolve;
    });
    this.#started = startFfmpeg(options).then(
      (ffmpeg) => {
        this.#ffmpeg = ffmpeg;
        this.#writeDue();
        return ffmpeg;
      },
      (error: unknown) => {
        this.#stderr = `could not start: ${error instanceof Error ? error.message : String(error)}`;
        return null;
      },
    );
    this.#tick = new PeriodicTimer(Math.round(1000 / options.fps), () => this.#writeDue(), (error) => {
      this.#stderr += `writing frames failed: ${String(error)}\n`;
    });
    this.#tick.start();
  }

  /** ffmpeg's pid once it runs. */
  get pid(): number | undefined {
    return this.#ffmpeg?.pid;
  }

  /** Bytes written to ffmpeg that it has not read yet: at most MAX_PENDING_BYTES and a frame. */
  get pendingBytes(): number {
    return this.#ffmpeg?.stdin.writableLength ?? 0;
  }

  /** The page's newest frame, a JPEG; shown from the next due frame on. */
  push(jpeg: Buffer): void {
    this.#latest = jpeg;
  }

  /** Writes the last due frames, closes ffmpeg's input and waits for the file to be complete. */
  stop(): Promise<EncodedVideo> {
    this.#stopping ??= (async () => {
      await this.#tick.stop();
      const ffmpeg = await this.#started;
      if (ffmpeg === null) return { ...videoOf(this.#options, 0), ok: false, diagnostics: this.#stderr };
      this.#writeDue();
      ffmpeg.stdin.end();
      return untilEncoded(ffmpeg, this.#options, this.#written, this.#stderr);
    })();
    return this.#stopping;
  }

  #writeDue(): void {
    const stdin = this.#ffmpeg?.stdin;
    if (stdin === undefined || stdin.destroyed || stdin.writableEnded) return;
    const due = Math.max(Math.floor(((Date.now() - this.#startedAt) * this.#fps) / 1000) + 1, this.#backlog.length);
    // After a long stall the gap is filled over the next ticks rather than in one burst;
    // a backlog goes as fast as ffmpeg reads it.
    const count = Math.min(due - this.#written, Math.max(MAX_CATCH_UP_FRAMES, this.#backlog.length - this.#written));
    for (let index = 0; index < count && stdin.writableLength < MAX_PENDING_BYTES; index += 1) {
      stdin.write(this.#backlog[this.#written] ?? this.#latest);
      this.#written += 1;
    }
    if (this.#written >= this.#backlog.length && !this.#backlogDone) {
      this.#backlogDone = true;
      if (stdin.writableLength === 0) this.#backlogWritten();
      else stdin.once('drain', () => this.#backlogWritten());
    }
  }
}

function killIfRunning(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone meanwhile.
  }
}

function even(value: number): number {
  return Math.max(2, Math.floor(value / 2) * 2);
}
