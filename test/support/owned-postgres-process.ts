// The PostgreSQL of owned-postgres.ts as a process of its own, for a host of
// network-hosts.ts: `owned-postgres-process.ts <folder> <port> <address>` serves the
// cluster in <folder>/postgres (made at the first run) on the host's loopback and on
// <address>, to clients on the host's network, until SIGTERM; it prints its URL (on
// <address>) as the first line of its output.
import { appendFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../db/embedded-postgres';

const [folder, port, address] = process.argv.slice(2);
if (folder === undefined || port === undefined || address === undefined) throw new Error('usage: owned-postgres-process.ts <folder> <port> <address>');
const settings = { dir: path.join(folder, 'postgres'), port: Number(port), onLog: () => {} };
// The service's embedded PostgreSQL listens on loopback and lets in loopback clients only:
// a new cluster is made by a first start, then opened to the network ("samenet": the
// subnets the server's own addresses are on) before the start that serves.
const hba = path.join(settings.dir, 'pg_hba.conf');
if (!(await readFile(hba, 'utf8').catch(() => '')).includes('samenet')) {
  await (await startEmbeddedPostgres(settings)).stop();
  await appendFile(hba, '\nhost all all samenet scram-sha-256\n');
  await appendFile(path.join(settings.dir, 'postgresql.conf'), `\nlisten_addresses = '127.0.0.1,${address}'\n`);
}
const server = await startEmbeddedPostgres(settings);
const url = new URL(server.url);
url.hostname = address;
process.stdout.write(`${url.toString()}\n`);
process.once('SIGTERM', () => void server.stop().then(() => process.exit(0)));
