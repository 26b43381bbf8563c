import { writeFileSync } from 'node:fs';
import { PeriodicTimer } from '../domain/periodic-timer';
import { spawnPiped, type PipedChild } from '../os/spawner/child-spawner';

const FFMPEG = '/usr/bin/ffmpeg';
/**
 * ffmpeg runs as background work: its start (about 80 ms of CPU, most of it loading its
 * libraries) fell in a task's first steps, and its encoding in every step after; at a
 * niceness of 10 the page, the browser and the service go first, and ffmpeg, far below
 * a core at a recording's few frames a second, keeps up in the time they leave it.
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

/**
 * Turns the screencast's JPEG frames into an H.264 video with Debian's ffmpeg.
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
 * ffmpeg is started by the spawner (child-spawner.ts), so a recording's start costs the
 * event loop nothing; frames due before it runs are written once it does, as after a stall.
 */
export class FrameEncoder {
  readonly #started: Promise<PipedChild | null>;
  readonly #tick: PeriodicTimer;
  readonly #startedAt = Date.now();
  readonly #fps: number;
  /** The video's frame size. */
  readonly width: number;
  readonly height: number;
  #ffmpeg: PipedChild | null = null;
  #latest: Buffer;
  #written = 0;
  #stopping: Promise<{ durationMs: number; ok: boolean }> | null = null;
  #stderr = '';

  constructor(options: EncoderOptions, firstFrame: Buffer) {
    const width = even(options.width);
    const height = even(options.height);
    this.width = width;
    this.height = height;
    this.#fps = options.fps;
    this.#latest = firstFrame;
    // prettier-ignore
    const args = [
      '-hide_banner', '-loglevel', 'error', '-y',
      '-f', 'image2pipe', '-framerate', String(options.fps), '-c:v', 'mjpeg', '-i', 'pipe:0',
      '-vf', `scale=${width}:${height}:force_original_aspect_ratio=decrease,pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2,format=yuv420p`,
      '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-crf', '32', '-g', String(options.fps * 2),
      '-threads', '1',
      '-movflags', 'frag_keyframe+empty_moov+default_base_moof', '-f', 'mp4', options.file,
    ];
    this.#started = spawnPiped(FFMPEG, args, { niceness: ENCODER_NICENESS }).then(
      (ffmpeg) => {
        this.#ffmpeg = ffmpeg;
        // A dead ffmpeg makes writes fail with EPIPE; stop() reports it.
        ffmpeg.stdin.on('error', () => undefined);
        try {
          writeFileSync(options.pidFile, String(ffmpeg.pid), { mode: 0o600 });
        } catch {
          // Without it, recovery still finishes the file; it only cannot wait for this ffmpeg.
        }
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

  /** What ffmpeg said on stderr (for the log when it failed). */
  get diagnostics(): string {
    return this.#stderr.trim();
  }

  /** The page's newest frame, a JPEG; shown from the next due frame on. */
  push(jpeg: Buffer): void {
    this.#latest = jpeg;
  }

  /** Writes the last due frames, closes ffmpeg's input and waits for the file to be complete. */
  stop(): Promise<{ durationMs: number; ok: boolean }> {
    this.#stopping ??= (async () => {
      await this.#tick.stop();
      const ffmpeg = await this.#started;
      if (ffmpeg === null) return { durationMs: 0, ok: false };
      this.#writeDue();
      ffmpeg.stdin.end();
      const timer = setTimeout(() => killIfRunning(ffmpeg.pid), STOP_TIMEOUT_MS);
      const end = await ffmpeg.exited;
      clearTimeout(timer);
      const ok = 'code' in end && end.code === 0;
      if ('stderr' in end) this.#stderr += end.stderr;
      if (!ok) this.#stderr = `${'error' in end ? end.error : `exited with ${end.code ?? end.signal}`}; ${this.#stderr}`;
      return { durationMs: Math.round((this.#written * 1000) / this.#fps), ok };
    })();
    return this.#stopping;
  }

  #writeDue(): void {
    const stdin = this.#ffmpeg?.stdin;
    if (stdin === undefined || stdin.destroyed || stdin.writableEnded) return;
    const due = Math.floor(((Date.now() - this.#startedAt) * this.#fps) / 1000) + 1;
    // After a long stall the gap is filled over the next ticks rather than in one burst.
    const count = Math.min(due - this.#written, MAX_CATCH_UP_FRAMES);
    for (let index = 0; index < count && stdin.writableLength < MAX_PENDING_BYTES; index += 1) {
      stdin.write(this.#latest);
      this.#written += 1;
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
