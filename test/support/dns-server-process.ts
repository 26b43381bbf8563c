// A name server for the hosts of network-hosts.ts, standing in for an internal DNS zone:
// `dns-server-process.ts <address> <name>=<ipv4>[,<ipv4>...] ...` answers A queries for
// those names with their addresses (TTL 1 s, in the order given), and every other query
// with NXDOMAIN, on UDP port 53 of `address`, until SIGTERM. It prints "ready" first.
import { createSocket } from 'node:dgram';

const [address, ...entries] = process.argv.slice(2);
if (address === undefined || entries.length === 0) throw new Error('usage: dns-server-process.ts <address> <name>=<ipv4>[,<ipv4>...] ...');
const zone = new Map(entries.map((entry) => {
  const [name, addresses] = entry.split('=');
  return [name!.toLowerCase(), addresses!.split(',')] as const;
}));

const A = 1;
const IN = 1;

/** The answer to one query (RFC 1035 §4.1): the question echoed, then A records or NXDOMAIN. */
function answer(query: Buffer): Buffer | null {
  if (query.length < 17) return null;
  const labels: string[] = [];
  let offset = 12;
  while (offset < query.length && query[offset] !== 0) {
    const length = query[offset]!;
    labels.push(query.subarray(offset + 1, offset + 1 + length).toString('ascii'));
    offset += length + 1;
  }
  const questionEnd = offset + 5;
  if (questionEnd > query.length) return null;
  const type = query.readUInt16BE(offset + 1);
  const addresses = zone.get(labels.join('.').toLowerCase());
  const records = addresses !== undefined && type === A ? addresses : [];
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2); // the id
  // Response, recursion desired and available; NXDOMAIN (3) for a name not in the zone.
  header.writeUInt16BE(0x8180 | (addresses === undefined ? 3 : 0), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(records.length, 6);
  const parts = [header, query.subarray(12, questionEnd)];
  for (const ipv4 of records) {
    const record = Buffer.alloc(16);
    record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    record.writeUInt16BE(A, 2);
    record.writeUInt16BE(IN, 4);
    record.writeUInt32BE(1, 6);
    record.writeUInt16BE(4, 10);
    ipv4.split('.').forEach((octet, index) => record.writeUInt8(Number(octet), 12 + index));
    parts.push(record);
  }
  return Buffer.concat(parts);
}

const socket = createSocket('udp4');
socket.on('message', (query, peer) => {
  const reply = answer(query);
  if (reply !== null) socket.send(reply, peer.port, peer.address);
});
socket.bind(53, address, () => process.stdout.write('ready\n'));
process.once('SIGTERM', () => socket.close(() => process.exit(0)));
