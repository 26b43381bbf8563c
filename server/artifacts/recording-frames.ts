import { rm } from 'node:fs/promises';
import type { Logger } from '../core/log';
import { FrameEncoder, type EncodedVideo, type EncoderOptions } from './frame-encoder';
import { FrameSpool, readFrameSpool } from './frame-spool';

/** How a recording's frames ended: kept in their spool for the encoding after, encoded, or lost. */
export type FramesEnd = { kind: 'spooled' } | { kind: 'encoded'; video: EncodedVideo } | { kind: 'failed'; diagnostics: string };

export interface RecordingFramesOptions extends EncoderOptions {
  /** Where the frames wait to be encoded. */
  spoolFile: string;
  /**
   * How long the frames wait in the spool: a recording that ends sooner is encoded after
   * its end, a longer one from then on as its frames come. 0: always as they come.
   */
  encodeLiveAfterMs: number;
  log: Logger;
}

/**
 * A recording's frames from its first one on. They go to a spool (frame-spool.ts), not to
 * ffmpeg: a task run or a CDP connection that ends within `encodeLiveAfterMs` never runs
 * an encoder beside its browser, and its video is encoded after its end (recorder.ts, one
 * encoding at a time). On a host that runs ten devices, ffmpeg's start and its encoding
 * were the largest share of what a recorded step costs beyond the page's own work.
 *
 * A recording that goes on longer starts its encoder then, with the spool as its backlog,
 * and removes the spool once ffmpeg's pipe holds all of it: what waits on disk is bounded
 * by a minute or so of frames, and a long session is encoded as it goes, as before.
 */
export class RecordingFrames {
  readonly #options: RecordingFramesOptions;
  readonly #spool: FrameSpool | null;
  readonly #goLive: NodeJS.Timeout | null;
  #encoder: FrameEncoder | null = null;
  #switching: Promise<void> | null = null;

  constructor(options: RecordingFramesOptions, firstFrame: Buffer) {
    this.#options = options;
    if (options.encodeLiveAfterMs <= 0) {
      this.#spool = null;
      this.#goLive = null;
      this.#encoder = new FrameEncoder(options, firstFrame);
      return;
    }
    this.#spool = new FrameSpool(options.spoolFile, options.fps, firstFrame);
    this.#goLive = setTimeout(() => {
      this.#switching = this.#encodeFromNowOn(this.#spool!);
    }, options.encodeLiveAfterMs);
    this.#goLive.unref();
  }

  /** The page's newest frame, a JPEG. */
  push(jpeg: Buffer): void {
    if (this.#encoder !== null) this.#encoder.push(jpeg);
    else this.#spool?.push(jpeg);
  }

  /** Ends the frames: the spool closed for the encoding after, or the encoder's video finished. */
  async end(): Promise<FramesEnd> {
    if (this.#goLive !== null) clearTimeout(this.#goLive);
    await this.#switching;
    if (this.#encoder !== null) {
      const video = await this.#encoder.stop();
      // Whatever the spool held is in the video now, or lost with an ffmpeg that failed.
      if (this.#spool !== null) await rm(this.#options.spoolFile, { force: true });
      return { kind: 'encoded', video };
    }
    try {
      await this.#spool!.close();
      return { kind: 'spooled' };
    } catch (error) {
      return { kind: 'failed', diagnostics: `its frames could not be kept: ${error instanceof Error ? error.message : String(error)}` };
    }
  }

  async #encodeFromNowOn(spool: FrameSpool): Promise<void> {
    const { spoolFile, log } = this.#options;
    let backlog: Buffer[] = [];
    try {
      await spool.close();
      backlog = (await readFrameSpool(spoolFile))?.frames ?? [];
    } catch (error) {
      // The video then starts here; what the spool held is lost with it.
      log.warn({ err: error, file: spoolFile }, 'a recording\'s kept frames could not be read back; its video starts now');
    }
    const encoder = new FrameEncoder(this.#options, spool.latest, { startedAt: spool.startedAt, frames: backlog });
    this.#encoder = encoder;
    // Once ffmpeg's pipe holds the backlog, a crash leaves it to ffmpeg, which finishes the
    // file (recorder.ts's recovery stores it); until then the spool is what a restart encodes.
    void encoder.backlogWritten.then(() => rm(spoolFile, { force: true }).catch(() => undefined));
  }
}
