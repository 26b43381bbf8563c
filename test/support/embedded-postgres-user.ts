// A process using the embedded PostgreSQL of a cluster, as the service or the operator
// CLI does: `embedded-postgres-user.ts <cluster folder> <port>` starts the server (or
// finds it running) and prints its URL as the first line of its output; it uses the
// server until its input ends, then leaves it and ends by itself, with nothing keeping
// it alive (no process.exit).
import { startEmbeddedPostgres } from '../../db/embedded-postgres';

const [dir, port] = process.argv.slice(2);
if (dir === undefined || port === undefined) throw new Error('usage: embedded-postgres-user.ts <cluster folder> <port>');
const server = await startEmbeddedPostgres({ dir, port: Number(port), onLog: () => {} });
process.stdout.write(`${server.url}\n`);
process.stdin.resume();
process.stdin.once('end', () => void server.stop());
