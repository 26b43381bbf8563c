import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { fileURLToPath } from 'node:url';
import next from 'next';

// This file is server/assembly/next-console.ts: the project is two folders up.
const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The Next.js app (console pages), served by our own node server on the API's port. */
export async function startConsole() {
  const app = next({ dev: false, dir: PROJECT_ROOT });
  await app.prepare();
  const handle = app.getRequestHandler();
  const upgrade = app.getUpgradeHandler();
  return {
    handle: (req: IncomingMessage, res: ServerResponse) => handle(req, res),
    upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      void upgrade(req, socket, head);
    },
    close: () => app.close(),
  };
}
