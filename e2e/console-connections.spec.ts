import { expect, test } from './support/test';
import { RawConnection } from '../test/support/raw-http';

// The Next.js console on a connection a proxy reuses: pages answered keep-alive one after
// another, and `Connection: close` answered with close and the socket closed, as on every
// route of the service (test/integration/http-connections.test.ts covers the others; the
// console is served only here, by a built Next.js).

const baseUrl = () => process.env.E2E_BASE_URL!;

test('console pages keep a connection alive and honour Connection: close', async () => {
  const connection = await RawConnection.open(baseUrl());
  try {
    for (let i = 0; i < 2; i++) {
      const page = await connection.request('GET', '/');
      expect(page.status).toBe(200);
      expect(page.headers.connection).toBe('keep-alive');
      expect(page.body.toString()).toContain('Browser Device Operator Service');
    }
    const last = await connection.request('GET', '/', { Connection: 'close' });
    expect(last.status).toBe(200);
    expect(last.headers.connection).toBe('close');
    await connection.ended;
    expect(connection.closedByServer).toBe(true);
  } finally {
    connection.close();
  }
});
