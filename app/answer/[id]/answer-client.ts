import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
// Types only: no server code reaches the browser bundle.
import type { ConsoleAppRouter } from '../../../server/console/console-router';

/**
 * The answer page's client of the console API: the CSRF header every console call
 * carries, and the access token the link was traded for, in a header (never the URL).
 */
export function answerApi(access: () => string | null) {
  return createTRPCClient<ConsoleAppRouter>({
    links: [
      httpLink({
        url: '/console/api',
        headers: () => {
          const token = access();
          return token === null ? { 'x-svc-console': '1' } : { 'x-svc-console': '1', 'x-svc-answer-access': token };
        },
      }),
    ],
  });
}

/** The error table's code of a failed call, or null. */
export function codeOf(error: unknown): string | null {
  if (error instanceof TRPCClientError) {
    const code = (error.data as { code?: unknown } | undefined)?.code;
    if (typeof code === 'string') return code;
    const body = (error.meta as { responseJSON?: { error?: { code?: unknown } } } | undefined)?.responseJSON;
    if (typeof body?.error?.code === 'string') return body.error.code;
  }
  return null;
}

export function sentenceOf(error: unknown): string {
  if (error instanceof TRPCClientError) {
    const body = (error.meta as { responseJSON?: { error?: { message?: unknown } } } | undefined)?.responseJSON;
    if (typeof body?.error?.message === 'string') return body.error.message;
  }
  return error instanceof Error ? error.message : 'Something went wrong.';
}
