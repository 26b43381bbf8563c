// The s3rver of s3-server.ts as a process of its own, for a host of network-hosts.ts:
// `s3-server-process.ts <bucket> <directory> <address>` serves until SIGTERM and prints
// its port as the first line of its output.
import S3rver from 's3rver';

const [bucket, directory, address] = process.argv.slice(2);
if (bucket === undefined || directory === undefined || address === undefined) throw new Error('usage: s3-server-process.ts <bucket> <directory> <address>');
const server = new S3rver({ address, port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
const { port } = await server.run();
process.stdout.write(`${port}\n`);
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
