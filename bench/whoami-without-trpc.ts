import { createServer } from 'node:http';
import { connectDatabase } from '../db/client';
import { Authenticator } from '../server/domain/keys/authenticate';
import { keyRecordLoader, lastUsedRecorder } from '../server/domain/keys/key-record';
import { whoami } from '../server/domain/keys/whoami';
import { LimiterStore } from '../server/domain/rate-limit/limiter-store';
import { RateLimiter } from '../server/domain/rate-limit/rate-limiter';
import { sendErrorResponse } from '../server/trpc/send-error';
import { newPublicId } from '../server/domain/ids';
import { createLogger } from '../server/core/log';
import { bearerOf } from '../server/http/resolve-caller';

// The service's own per-request work for GET /v1/whoami without tRPC and trpc-to-openapi:
// request id, the real key cache on the real database, the real rate limiter with its
// headers, the whoami body. bench/api.ts runs it between the bare server and the service
// to show what the API framework costs and what the service's own checks cost.
// Usage: tsx bench/whoami-without-trpc.ts <database url> <port>
const [databaseUrl, port] = [process.argv[2]!, Number(process.argv[3])];
const database = connectDatabase(databaseUrl, 4);
const authenticator = new Authenticator(keyRecordLoader(database.db), lastUsedRecorder(database.db));
const log = createLogger('warn');
const rateLimiter = await RateLimiter.create({ perSecond: 1_000_000, burst: 1_000_000 }, LimiterStore.open('memory', databaseUrl));

createServer((req, res) => {
  const requestId = newPublicId('request');
  res.setHeader('X-Request-Id', requestId);
  authenticator
    .authenticate(bearerOf(req))
    .then(async (principal) => {
      await rateLimiter.consume(principal.keyId, res);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(whoami(principal)));
    })
    .catch((error: unknown) => sendErrorResponse(log, res, requestId, error));
}).listen(port, '127.0.0.1');
