import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type { ByteRange, ObjectBody, ObjectStore, StoredObject } from './object-store';
import { StorageUnavailableError } from '../core/errors';
import type { S3Location } from '../core/storage-url';

// A store that takes connections and never answers (a network that drops its packets)
// must not hold a read, a write or a stop forever: a connection is given this long, a
// connection this long without a byte either way is given up (a slow upload still moves),
// and a read waits this long for the store's answer (its bytes then flow at the client's
// pace). The SDK tries each request three times.
const CONNECT_TIMEOUT_MS = 5_000;
const IDLE_SOCKET_TIMEOUT_MS = 30_000;
const READ_ANSWER_TIMEOUT_MS = 10_000;

/**
 * Objects in an S3-compatible bucket, under a prefix. Credentials come from the URL's
 * userinfo when given, else from the AWS SDK's standard chain (AWS_ACCESS_KEY_ID and
 * AWS_SECRET_ACCESS_KEY, profiles, instance roles); they never reach the log.
 */
export class S3ObjectStore implements ObjectStore {
  readonly description: string;
  readonly #client: S3Client;

  constructor(private readonly location: S3Location) {
    this.description = `s3 bucket ${location.bucket}${location.prefix === '' ? '' : `/${location.prefix}`}${location.endpoint === null ? '' : ` at ${location.endpoint}`}`;
    this.#client = new S3Client({
      region: location.region,
      ...(location.endpoint === null ? {} : { endpoint: location.endpoint }),
      forcePathStyle: location.forcePathStyle,
      // The SDK's default CRC checksums send a streamed body `aws-chunked`, which
      // S3-compatible servers (s3rver, older MinIO, Ceph) store with its framing: only
      // where S3 requires them.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(location.credentials === null ? {} : { credentials: location.credentials }),
      requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, socketTimeout: IDLE_SOCKET_TIMEOUT_MS },
    });
  }

  async put(key: string, body: ObjectBody, contentType: string, signal?: AbortSignal): Promise<StoredObject> {
    const size = Buffer.isBuffer(body) ? body.length : (await stat(body.file)).size;
    await this.#client.send(
      new PutObjectCommand({
        Bucket: this.location.bucket,
        Key: this.#key(key),
        Body: Buffer.isBuffer(body) ? body : createReadStream(body.file),
        ContentLength: size,
        ContentType: contentType,
      }),
      { abortSignal: signal },
    );
    return { size };
  }

  async get(key: string, range?: ByteRange): Promise<Readable | null> {
    try {
      const answer = await untilAnswered((abortSignal) =>
        this.#client.send(new GetObjectCommand({ Bucket: this.location.bucket, Key: this.#key(key), ...(range === undefined ? {} : { Range: `bytes=${range.start}-${range.end}` }) }), { abortSignal }),
      );
      return answer.Body as Readable;
    } catch (error) {
      if (isMissing(error)) return null;
      throw new StorageUnavailableError(error);
    }
  }

  async head(key: string): Promise<StoredObject | null> {
    try {
      const answer = await untilAnswered((abortSignal) => this.#client.send(new HeadObjectCommand({ Bucket: this.location.bucket, Key: this.#key(key) }), { abortSignal }));
      return { size: answer.ContentLength ?? 0 };
    } catch (error) {
      if (isMissing(error)) return null;
      throw new StorageUnavailableError(error);
    }
  }

  async delete(key: string): Promise<void> {
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: this.#key(key) }));
  }

  #key(key: string): string {
    return this.location.prefix === '' ? key : `${this.location.prefix}/${key}`;
  }
}

/** `send`, given up unless the store answers within READ_ANSWER_TIMEOUT_MS (what follows the answer is not timed). */
async function untilAnswered<T>(send: (abortSignal: AbortSignal) => Promise<T>): Promise<T> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), READ_ANSWER_TIMEOUT_MS);
  try {
    return await send(deadline.signal);
  } finally {
    clearTimeout(timer);
  }
}

function isMissing(error: unknown): boolean {
  return error instanceof S3ServiceException && (error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata.httpStatusCode === 404);
}
