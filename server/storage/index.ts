import { LocalObjectStore } from './local-object-store';
import type { ObjectStore } from './object-store';
import { S3ObjectStore } from './s3-object-store';
import type { StorageLocation } from '../core/storage-url';

export type { ByteRange, ObjectBody, ObjectStore, StoredObject } from './object-store';
export { parseStorageUrl, type StorageLocation } from '../core/storage-url';
export { RetryingWrites, WRITE_PATIENCE_MS, type WriteOutcome } from './retrying-writes';

export function openObjectStore(location: StorageLocation): ObjectStore {
  return location.kind === 'local' ? new LocalObjectStore(location.directory) : new S3ObjectStore(location);
}
