import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

/** s3rver's fixed credentials. */
export const S3_ACCESS_KEY = 'S3RVER';
export const S3_SECRET = 'S3RVER';

/** An S3-compatible server (s3rver) on 127.0.0.1, with one bucket, its objects in a temporary folder. */
export async function startS3Server(bucket: string): Promise<{ endpoint: string; storageUrl(prefix: string): string; close(): Promise<void> }> {
  const directory = await mkdtemp(path.join(tmpdir(), 's3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    storageUrl: (prefix) => `s3://${S3_ACCESS_KEY}:${S3_SECRET}@${bucket}/${prefix}?endpoint=${encodeURIComponent(endpoint)}&region=us-east-1`,
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
