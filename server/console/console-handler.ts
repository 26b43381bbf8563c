import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import type { Services } from '../services';
import { consoleAppRouter } from './console-router';
import { readConsoleCookie } from './console-trpc';

/** Mount point of the console API on the service's port. */
export const CONSOLE_API_PREFIX = '/console/api/';

/** The console API handler: tRPC's node adapter over the console router. */
export function createConsoleHandler(services: Services): (req: IncomingMessage, res: ServerResponse) => void {
  return createHTTPHandler({
    router: consoleAppRouter,
    basePath: CONSOLE_API_PREFIX,
    createContext: ({ req, res }) => ({ req, res, services, token: readConsoleCookie(req) }),
    onError: ({ error }) => {
      if (error.code === 'INTERNAL_SERVER_ERROR') services.log.error({ err: error.cause ?? error }, 'console call failed');
    },
  });
}
