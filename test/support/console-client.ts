import { createTRPCClient, httpLink, isTRPCClientError } from '@trpc/client';
import { expect } from 'vitest';
import type { ConsoleAppRouter } from '../../server/console/console-router';

/** A console API client with its own cookie jar, as a browser would keep it. */
export function consoleClient(baseUrl: string) {
  const jar = { cookie: '', setCookie: '' };
  const client = createTRPCClient<ConsoleAppRouter>({
    links: [
      httpLink({
        url: `${baseUrl}/console/api`,
        headers: ({ op }) => ({ 'x-svc-console': '1', ...(jar.cookie === '' ? {} : { cookie: jar.cookie }), ...(typeof op.context.orgId === 'string' ? { 'x-svc-org': op.context.orgId } : {}) }),
        fetch: async (url, init) => {
          const response = await fetch(url, init);
          const setCookie = response.headers.get('set-cookie');
          if (setCookie !== null) {
            jar.setCookie = setCookie;
            jar.cookie = setCookie.split(';', 1)[0]!;
          }
          return response;
        },
      }),
    ],
  });
  return { client, jar };
}

/**
 * A failed call as the console's pages see it: the status, the message and the error
 * table's code (and the field of an input error), and nothing else of tRPC's shape.
 */
export async function consoleFailure(call: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await call;
  } catch (error) {
    if (!isTRPCClientError<ConsoleAppRouter>(error) || !error.data) throw error;
    const { httpStatus, ...data } = error.data;
    expect((error.meta?.response as Response).status).toBe(httpStatus);
    return { status: httpStatus, message: error.message, ...data };
  }
  throw new Error('expected the call to fail');
}
