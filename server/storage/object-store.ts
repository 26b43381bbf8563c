import type { Readable } from 'node:stream';

/** An inclusive byte range of an object, as an HTTP `Range` names it once resolved. */
export interface ByteRange {
  start: number;
  end: number;
}

export type ObjectBody = Buffer | { file: string };

export interface StoredObject {
  size: number;
}

/**
 * Where recordings, step screenshots and downloaded files are kept: the local data
 * directory (`local-object-store.ts`) or an S3-compatible bucket (`s3-object-store.ts`),
 * chosen by OPERATOR_STORAGE_URL. Keys are `/`-separated paths of the service's own
 * making (never a client's text).
 */
export interface ObjectStore {
  /** A description without credentials, for the log. */
  readonly description: string;
  /**
   * Writes the object whole, replacing any object under the key; returns its size. A
   * body is bytes or a local file (recordings and downloads are files first: a length
   * known up front is what S3's PutObject needs to stream it). `signal` gives the write
   * up (a stopping process); a local write, quick, finishes regardless.
   */
  put(key: string, body: ObjectBody, contentType: string, signal?: AbortSignal): Promise<StoredObject>;
  /**
   * The object's bytes (one range of them when given); null when there is no such object.
   * A store that cannot answer throws StorageUnavailableError (core/errors.ts), as head() does.
   */
  get(key: string, range?: ByteRange): Promise<Readable | null>;
  head(key: string): Promise<StoredObject | null>;
  /** Removes the object; no error when it is already gone. */
  delete(key: string): Promise<void>;
}
