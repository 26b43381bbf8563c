import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/assembly/start-service';
import { fileBytes, startColourPages } from '../support/colour-pages';
import { apiClient } from '../support/http';
import { startS3Server, S3_ACCESS_KEY, S3_SECRET } from '../support/s3-server';
import { readStream, waitForTaskEnd } from '../support/task-helpers';
import { createTenant, startAnotherInstance, startTestService, type TestService } from '../support/test-service';

// Two instances on one database and one store: the recording, screenshots and file written by
// the instance that ran the task are served by the other. Once with S3 (s3rver), once
// with a folder both share (OPERATOR_STORAGE_URL=file:///...).

let s3: Awaited<ReturnType<typeof startS3Server>>;
let pages: Awaited<ReturnType<typeof startColourPages>>;
let sharedFolder: string;

beforeAll(async () => {
  s3 = await startS3Server('artifacts');
  pages = await startColourPages();
  sharedFolder = await mkdtemp(path.join(tmpdir(), 'shared-storage-'));
});
afterAll(async () => {
  await s3?.close();
  await pages?.close();
  await rm(sharedFolder, { recursive: true, force: true });
});

const setups: Array<[string, () => string]> = [
  ['an S3-compatible server', () => s3.storageUrl('operator')],
  ['a shared folder', () => `file://${sharedFolder}`],
];

describe.each(setups)('two instances storing in %s', (name, storageUrl) => {
  let test: TestService;
  let other: RunningService;

  beforeAll(async () => {
    test = await startTestService({ OPERATOR_STORAGE_URL: storageUrl() });
    other = await startAnotherInstance(test);
  });
  afterAll(async () => {
    await other?.close();
    await test?.stop();
  });

  it('serves from either instance what the instance running the task recorded', async () => {
    const tenant = await createTenant(test);
    const key = await tenant.key(['operator:devices:write', 'operator:tasks:read', 'operator:tasks:write']);
    const api = apiClient(test.url, key);
    const device = await api('POST', '/v1/devices', { space_id: tenant.spaceId });
    const submitted = await api('POST', `/v1/devices/${device.body.id}/tasks`, {
      prompt: `go to ${pages.url('/red?after=800')} then wait for "Ready" then go to ${pages.url('/downloads?bytes=3000')} then download "#file-3000"; return the title`,
    });
    expect((await waitForTaskEnd(api, submitted.body.id)).status).toBe('succeeded');

    const read = async (base: string, route: string) => {
      const response = await fetch(`${base}${route}`, { headers: { Authorization: `Bearer ${key}` } });
      return { status: response.status, type: response.headers.get('content-type'), bytes: Buffer.from(await response.arrayBuffer()) };
    };
    const recording = `/v1/tasks/${submitted.body.id}/recording`;
    const here = await read(test.url, recording);
    const there = await read(other.url, recording);
    expect(here.status).toBe(200);
    expect(there.status).toBe(200);
    expect(there.type).toBe('video/mp4');
    expect(there.bytes.equals(here.bytes)).toBe(true);

    const steps = (await readStream(`${other.url}/v1/tasks/${submitted.body.id}/events`, key)).frames.filter((frame) => frame.event === 'step');
    for (const frame of steps) {
      const { seq } = JSON.parse(frame.data!);
      const image = await read(other.url, `/v1/tasks/${submitted.body.id}/steps/${seq}/screenshot`);
      expect(image.status).toBe(200);
      expect(image.bytes.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    }

    const files = await apiClient(other.url, key)('GET', `/v1/tasks/${submitted.body.id}/files`);
    expect(files.body.data).toHaveLength(1);
    const file = await read(other.url, `/v1/tasks/${submitted.body.id}/files/${files.body.data[0].id}`);
    expect(file.status).toBe(200);
    expect(file.bytes.equals(fileBytes(3000))).toBe(true);

    if (name.startsWith('an S3')) {
      const client = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: { accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET } });
      const listed = await client.send(new ListObjectsV2Command({ Bucket: 'artifacts', Prefix: 'operator/' }));
      const keys = (listed.Contents ?? []).map((object) => object.Key!);
      expect(keys.filter((objectKey) => objectKey.startsWith('operator/recordings/task/'))).toHaveLength(1);
      expect(keys.filter((objectKey) => objectKey.endsWith('.jpg')).length).toBe(steps.length);
      expect(keys.filter((objectKey) => objectKey.includes('/files/'))).toHaveLength(1);
      client.destroy();
    }
    await api('DELETE', `/v1/devices/${device.body.id}`);
  });
});
