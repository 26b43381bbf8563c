import { createTRPCClient, httpLink, isTRPCClientError, TRPCClientError } from '@trpc/client';
// Types only: no server code reaches the browser bundle.
import type { ConsoleAppRouter } from '../../server/console/console-router';

/**
 * The console API on the same origin; `x-svc-console` is the API's CSRF guard. A call of
 * a /v1 operation names the organization it acts on in its context (`{ orgId }`), sent
 * as `x-svc-org`.
 */
export const consoleApi = createTRPCClient<ConsoleAppRouter>({
  links: [httpLink({ url: '/console/api', headers: ({ op }) => ({ 'x-svc-console': '1', ...(typeof op.context.orgId === 'string' ? { 'x-svc-org': op.context.orgId } : {}) }) })],
});

export type OrganizationPage = Awaited<ReturnType<typeof consoleApi.organizations.query>>;
export type OrganizationSummary = OrganizationPage['data'][number];
export type Organization = Awaited<ReturnType<typeof consoleApi.organization.query>>;
export type ApiKeyRow = Awaited<ReturnType<typeof consoleApi.keys.query>>[number];
export type PendingEscalation = Awaited<ReturnType<typeof consoleApi.pendingEscalations.query>>[number];
export type OperatorDevice = Awaited<ReturnType<typeof consoleApi.organizationDevices.query>>[number];
export type OperatorTask = Awaited<ReturnType<typeof consoleApi.recentTasks.query>>[number];
export type OperatorTaskView = Awaited<ReturnType<typeof consoleApi.task.query>>;
export type HourlyUsage = Awaited<ReturnType<typeof consoleApi.organizationUsage.query>>;
export type AuditPage = Awaited<ReturnType<typeof consoleApi.listAuditEvents.query>>;
export type OrganizationCredential = Awaited<ReturnType<typeof consoleApi.listCredentials.query>>['data'][number];

/** The console API's answer when the sign-in cookie is missing or expired: show the sign-in. */
export function isSignedOut(error: unknown): boolean {
  return isTRPCClientError<ConsoleAppRouter>(error) && error.data?.code === 'console_sign_in_required';
}

/**
 * The message to show an operator for a failed call: the error table's sentence, which
 * tRPC's client reads from its own shape. The limits the console API applies before tRPC
 * (too many failed sign-ins from this address, ...) answer with the API's CONTRACT.md
 * error body instead, which tRPC's client does not read itself.
 */
export function messageOf(error: unknown): string {
  if (error instanceof TRPCClientError) {
    const body: unknown = (error.meta as { responseJSON?: unknown } | undefined)?.responseJSON;
    const message = (body as { error?: { message?: unknown } } | null | undefined)?.error?.message;
    if (typeof message === 'string') return message;
  }
  return error instanceof Error ? error.message : 'Something went wrong.';
}
