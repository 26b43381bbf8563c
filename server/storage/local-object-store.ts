import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StorageUnavailableError } from '../core/errors';
import type { ByteRange, ObjectBody, ObjectStore, StoredObject } from './object-store';

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

/**
 * Objects as files under one directory (0700, the service's own). A write goes to a
 * temporary name first and is renamed into place, so a reader never sees half an object
 * and a crash leaves at most a `.partial` file, which the next put of the key replaces.
 */
export class LocalObjectStore implements ObjectStore {
  readonly description: string;

  constructor(private readonly root: string) {
    this.description = `local directory ${root}`;
  }

  async put(key: string, body: ObjectBody, _contentType: string): Promise<StoredObject> {
    const file = this.#file(key);
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const partial = `${file}.partial`;
    await pipeline(Buffer.isBuffer(body) ? Readable.from([body]) : createReadStream(body.file), createWriteStream(partial, { mode: 0o600 }));
    await rename(partial, file);
    return { size: (await stat(file)).size };
  }

  async get(key: string, range?: ByteRange): Promise<Readable | null> {
    const file = this.#file(key);
    if ((await this.head(key)) === null) return null;
    return createReadStream(file, range === undefined ? {} : { start: range.start, end: range.end });
  }

  async head(key: string): Promise<StoredObject | null> {
    try {
      const info = await stat(this.#file(key));
      return info.isFile() ? { size: info.size } : null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new StorageUnavailableError(error);
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.#file(key), { force: true });
  }

  #file(key: string): string {
    // Keys are the service's own; this only guards against a bug walking out of the root.
    if (!SAFE_KEY.test(key) || key.split('/').some((part) => part === '..' || part === '.')) throw new Error(`invalid object key ${JSON.stringify(key)}`);
    return path.join(this.root, ...key.split('/'));
  }
}
