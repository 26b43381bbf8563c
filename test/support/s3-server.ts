import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { runScriptInHost, type NetworkHost } from './network-hosts';

/** s3rver's fixed credentials. */
export const S3_ACCESS_KEY = 'S3RVER';
export const S3_SECRET = 'S3RVER';

/**
 * An S3-compatible server (s3rver) with one bucket, its objects in a temporary folder: on
 * 127.0.0.1 in this process, or in its own process on a host of network-hosts.ts.
 */
export async function startS3Server(bucket: string, options: { host?: NetworkHost } = {}): Promise<{ endpoint: string; storageUrl(prefix: string): string; close(): Promise<void> }> {
  const directory = await mkdtemp(path.join(tmpdir(), 's3rver-'));
  let endpoint: string;
  let stop: () => Promise<void>;
  if (options.host === undefined) {
    const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
    const { port } = await server.run();
    endpoint = `http://127.0.0.1:${port}`;
    stop = () => server.close();
  } else {
    const script = await runScriptInHost(options.host, 'test/support/s3-server-process.ts', [bucket, directory, options.host.address]);
    endpoint = `http://${options.host.address}:${script.announced}`;
    stop = () => script.stop();
  }
  return {
    endpoint,
    storageUrl: (prefix) => `s3://${S3_ACCESS_KEY}:${S3_SECRET}@${bucket}/${prefix}?endpoint=${encodeURIComponent(endpoint)}&region=us-east-1`,
    async close() {
      await stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
