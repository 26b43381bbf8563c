import { open, readFile, type FileHandle } from 'node:fs/promises';
import { PeriodicTimer } from '../domain/periodic-timer';

/**
 * A recording's frames kept on disk until they are encoded (recorder.ts): what ffmpeg would
 * have been given, at a fraction of the cost. The file is a header (magic, fps) and records:
 * a frame record `[u32 tick][u32 length][JPEG]` says the video shows that JPEG from that tick
 * on, and a mark `[u32 tick][u32 0]` that the video runs at least to that tick (exclusive).
 * Ticks are the video's frames at `fps`, counted on the wall clock from the first frame, as
 * FrameEncoder counts them: the video has the real time of what it shows.
 *
 * Only a change is written (a frame record when the page sent a new frame before a tick, a
 * mark every second a still page shows): a page that sits still costs no write, and a
 * process killed mid-recording leaves a spool that holds all but its last second.
 */
const MAGIC = Buffer.from('OPSPOOL1');
const HEADER_BYTES = MAGIC.length + 4;
const RECORD_HEADER_BYTES = 8;

/** What a spool holds: the frame at each tick, and how many ticks the video has. */
export interface SpooledFrames {
  fps: number;
  /** The JPEG of each of the video's frames (a still page repeats one Buffer). */
  frames: Buffer[];
}

export class FrameSpool {
  readonly #file: string;
  readonly #fps: number;
  /** When the video's first frame is due: its tick 0. */
  readonly startedAt: number;
  readonly #tick: PeriodicTimer;
  #handle: Promise<FileHandle>;
  /** Writes in order: each waits for the one before. */
  #writing: Promise<void>;
  #latest: Buffer;
  #spooled: Buffer | null = null;
  /** Ticks covered by what was written: the video's length so far. */
  #ticks = 0;
  #markedAt = 0;
  #bytes = 0;
  #failure: unknown = null;
  #closed: Promise<void> | null = null;

  constructor(file: string, fps: number, firstFrame: Buffer, startedAt = Date.now()) {
    this.#file = file;
    this.#fps = fps;
    this.startedAt = startedAt;
    this.#latest = firstFrame;
    const header = Buffer.alloc(HEADER_BYTES);
    MAGIC.copy(header);
    header.writeUInt32BE(fps, MAGIC.length);
    this.#handle = open(file, 'wx', 0o600);
    this.#writing = this.#handle.then((handle) => handle.write(header)).then(() => undefined);
    this.#writing.catch((error: unknown) => this.#fail(error));
    this.#bytes = HEADER_BYTES;
    this.#spoolDue();
    this.#tick = new PeriodicTimer(Math.round(1000 / fps), () => this.#spoolDue(), (error) => this.#fail(error));
    this.#tick.start();
  }

  /** Bytes written or on their way. */
  get bytes(): number {
    return this.#bytes;
  }

  /** The page's newest frame, a JPEG; shown from the next due tick on. */
  push(jpeg: Buffer): void {
    this.#latest = jpeg;
  }

  /** The newest frame pushed. */
  get latest(): Buffer {
    return this.#latest;
  }

  /**
   * Writes the ticks due now and the mark of the video's end, and closes the file. Resolves
   * with the video's length in ticks; rejects when a write failed (the spool is then not
   * the recording).
   */
  async close(): Promise<number> {
    this.#closed ??= (async () => {
      await this.#tick.stop();
      this.#spoolDue();
      this.#append(this.#ticks, null);
      await this.#writing;
      await (await this.#handle).close();
    })();
    await this.#closed;
    if (this.#failure !== null) throw this.#failure;
    return this.#ticks;
  }

  #spoolDue(): void {
    if (this.#failure !== null) return;
    const due = Math.floor(((Date.now() - this.startedAt) * this.#fps) / 1000) + 1;
    if (due <= this.#ticks) return;
    if (this.#latest !== this.#spooled) {
      this.#append(this.#ticks, this.#latest);
      this.#spooled = this.#latest;
    } else if (due - this.#markedAt >= this.#fps) {
      this.#append(due, null);
    }
    this.#ticks = due;
  }

  #append(tick: number, jpeg: Buffer | null): void {
    const header = Buffer.alloc(RECORD_HEADER_BYTES);
    header.writeUInt32BE(tick, 0);
    header.writeUInt32BE(jpeg?.length ?? 0, 4);
    this.#markedAt = tick;
    this.#bytes += RECORD_HEADER_BYTES + (jpeg?.length ?? 0);
    this.#writing = this.#writing
      .then(async () => {
        const handle = await this.#handle;
        await handle.writev(jpeg === null ? [header] : [header, jpeg]);
      })
      .catch((error: unknown) => this.#fail(error));
  }

  #fail(error: unknown): void {
    this.#failure ??= error;
  }
}

/**
 * The frames of a spool, whole or as a crash left it (a record cut short is dropped); null
 * when the file is not a spool. Holds the spool in memory: a recording's spool is bounded
 * by how long it may defer its encoding.
 */
export async function readFrameSpool(file: string): Promise<SpooledFrames | null> {
  const bytes = await readFile(file);
  if (bytes.length < HEADER_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return null;
  const fps = bytes.readUInt32BE(MAGIC.length);
  const frames: Buffer[] = [];
  let shown: Buffer | null = null;
  let end = 0;
  for (let offset = HEADER_BYTES; offset + RECORD_HEADER_BYTES <= bytes.length; ) {
    const tick = bytes.readUInt32BE(offset);
    const length = bytes.readUInt32BE(offset + 4);
    const start = offset + RECORD_HEADER_BYTES;
    if (start + length > bytes.length) break;
    // Up to this record the video shows what it showed.
    if (shown !== null) while (frames.length < tick) frames.push(shown);
    if (length > 0) {
      shown = bytes.subarray(start, start + length);
      end = Math.max(end, tick + 1);
    } else {
      end = Math.max(end, tick);
    }
    offset = start + length;
  }
  if (shown === null) return { fps, frames: [] };
  while (frames.length < end) frames.push(shown);
  return { fps, frames };
}
