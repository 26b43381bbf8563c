import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseStorageUrl } from '../../server/core/storage-url';
import { openObjectStore, type ObjectStore } from '../../server/storage';
import { startS3Server, S3_SECRET } from '../support/s3-server';

// Both stores behind the one interface, the S3 one against s3rver on 127.0.0.1.

let s3: Awaited<ReturnType<typeof startS3Server>>;
let folder: string;

beforeAll(async () => {
  s3 = await startS3Server('artifacts');
  folder = await mkdtemp(path.join(tmpdir(), 'object-store-'));
});
afterAll(async () => {
  await s3?.close();
  await rm(folder, { recursive: true, force: true });
});

const stores: Array<[string, () => ObjectStore]> = [
  ['local', () => openObjectStore(parseStorageUrl(`file://${folder}/objects`, '/unused'))],
  ['s3', () => openObjectStore(parseStorageUrl(s3.storageUrl('some/prefix'), '/unused'))],
];

describe.each(stores)('the %s object store', (_name, open) => {
  it('puts bytes and files, reads them whole and by range, heads and deletes them', async () => {
    const store = open();
    expect(store.description).not.toContain(S3_SECRET);
    expect(await store.put('a/b/bytes.txt', Buffer.from('0123456789'), 'text/plain')).toEqual({ size: 10 });
    const file = path.join(folder, 'source.bin');
    await writeFile(file, Buffer.alloc(100_000, 7));
    expect(await store.put('a/file.bin', { file }, 'application/octet-stream')).toEqual({ size: 100_000 });

    expect(await text((await store.get('a/b/bytes.txt'))!)).toBe('0123456789');
    expect(await text((await store.get('a/b/bytes.txt', { start: 2, end: 4 }))!)).toBe('234');
    expect(await store.head('a/file.bin')).toEqual({ size: 100_000 });
    expect(await store.head('a/missing')).toBeNull();
    expect(await store.get('a/missing')).toBeNull();

    await store.put('a/b/bytes.txt', Buffer.from('new'), 'text/plain');
    expect(await text((await store.get('a/b/bytes.txt'))!)).toBe('new');
    await store.delete('a/b/bytes.txt');
    await store.delete('a/b/bytes.txt');
    expect(await store.head('a/b/bytes.txt')).toBeNull();
  });
});

describe('OPERATOR_STORAGE_URL', () => {
  it('defaults to the data directory and reads file and s3 URLs', () => {
    expect(parseStorageUrl(null, '/data')).toEqual({ kind: 'local', directory: '/data/storage' });
    expect(parseStorageUrl('file:///srv/shared', '/data')).toEqual({ kind: 'local', directory: '/srv/shared' });
    expect(parseStorageUrl('s3://bucket-1/a/b/?region=eu-west-1', '/data')).toEqual({
      kind: 's3',
      bucket: 'bucket-1',
      prefix: 'a/b',
      region: 'eu-west-1',
      endpoint: null,
      forcePathStyle: false,
      credentials: null,
    });
    expect(parseStorageUrl('s3://id:se%2Fcret@bucket-1?endpoint=http://127.0.0.1:9000', '/data')).toMatchObject({
      prefix: '',
      endpoint: 'http://127.0.0.1:9000',
      forcePathStyle: true,
      credentials: { accessKeyId: 'id', secretAccessKey: 'se/cret' },
    });
  });

  it('refuses what it cannot use, without repeating the URL (it may hold a secret)', () => {
    for (const bad of ['nope', 'ftp://host/x', 'file://host/dir', 's3://B/x', 's3://bucket?endpoint=javascript:x', 's3://id@bucket', 's3://bucket?force_path_style=yes']) {
      expect(() => parseStorageUrl(bad, '/data')).toThrow(/OPERATOR_STORAGE_URL/);
    }
    expect(() => parseStorageUrl('s3://id:topsecret@B', '/data')).toThrow(expect.objectContaining({ message: expect.not.stringContaining('topsecret') }));
  });
});
