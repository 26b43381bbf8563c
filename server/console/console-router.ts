import { TRPCError } from '@trpc/server';
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { escalations } from '../../db/schema';
import { endConsoleSession, startConsoleSession, CONSOLE_SESSION_MS } from '../domain/console/console-sessions';
import { authenticateConsoleKey, type Operator } from '../domain/console/operator-accounts';
import { listApiKeys, listOrganizations, pendingEscalations } from '../domain/console/operator-views';
import { resolveEscalation } from '../domain/escalations/resolve-escalation';
import { parsePublicId } from '../domain/ids';
import { isScope, scopes } from '../domain/keys/scopes';
import { ApiError } from '../errors';
import {
  createApiKey,
  createCheckedOrganization,
  createSpace,
  revokeApiKey,
  rotateEscalationSigningSecret,
  type AdminOrigin,
} from '../domain/orgs/operator-admin';
import { CONSOLE_COOKIE, consoleProcedure, consoleRouter, operatorProcedure, type ConsoleContext } from './console-trpc';

/** The domain's refusals of operator changes become the console's message. */
async function asOperatorError<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ApiError) throw new TRPCError({ code: 'BAD_REQUEST', message: error.message });
    throw error;
  }
}

function byOperator(operator: Operator): AdminOrigin {
  return { via: 'console', operator: operator.name };
}

function setSessionCookie(ctx: ConsoleContext, token: string, maxAgeSecs: number): void {
  const secure = ctx.services.config.http.publicUrl.startsWith('https:') ? '; Secure' : '';
  ctx.res.setHeader('Set-Cookie', `${CONSOLE_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSecs}${secure}`);
}

const name = z.string().trim().min(1).max(200);
const uuid = z.uuid();

/**
 * The operator console's API (served at /console/api by tRPC's node adapter): sign-in,
 * organizations (their escalation signing secret shown on creation and on rotation),
 * Spaces and keys as the admin CLI manages them, and answering escalations. Every change
 * goes through the same domain functions as the CLI and the public API, so it is audited
 * the same way.
 */
export const consoleAppRouter = consoleRouter({
  signIn: consoleProcedure.input(z.object({ console_key: z.string().max(200) })).mutation(async ({ ctx, input }) => {
    const operator = await authenticateConsoleKey(ctx.services.db, input.console_key);
    if (operator === null) {
      // Counted with every bearer entrance's failures; the console handler refuses the address once it is over.
      await ctx.services.authThrottle.recordFailure(ctx.req);
      throw new TRPCError({ code: 'UNAUTHORIZED', message: 'That console key is not valid.' });
    }
    const { token } = await startConsoleSession(ctx.services.db, operator);
    setSessionCookie(ctx, token, CONSOLE_SESSION_MS / 1000);
    return { name: operator.name };
  }),

  signOut: consoleProcedure.mutation(async ({ ctx }) => {
    if (ctx.token !== null) await endConsoleSession(ctx.services.db, ctx.token);
    setSessionCookie(ctx, '', 0);
    return { signed_out: true };
  }),

  me: operatorProcedure.query(({ ctx }) => ({ name: ctx.operator.name })),

  scopes: operatorProcedure.query(() => [...scopes]),

  organizations: operatorProcedure.query(({ ctx }) => listOrganizations(ctx.services.db)),

  createOrganization: operatorProcedure
    .input(
      z.object({
        name,
        entitled: z.boolean(),
        max_devices: z.number().int().min(0).max(1_000_000).nullable(),
        max_device_seconds: z.number().int().min(0).max(2 ** 31 - 1).nullable(),
        escalation_url: z.string().trim().max(2048).nullable(),
      }),
    )
    .mutation(({ ctx, input }) =>
      asOperatorError(async () => {
        const escalationUrl = input.escalation_url === '' ? null : input.escalation_url;
        return createCheckedOrganization(
          ctx.services.db,
          { name: input.name, entitled: input.entitled, maxDevices: input.max_devices, maxDeviceSeconds: input.max_device_seconds, escalationUrl },
          { allowPrivateDestinations: ctx.services.config.webhooks.allowPrivateDestinations, origin: byOperator(ctx.operator) },
        );
      }),
    ),

  rotateEscalationSecret: operatorProcedure
    .input(z.object({ org_id: uuid }))
    .mutation(({ ctx, input }) => asOperatorError(() => rotateEscalationSigningSecret(ctx.services.db, input.org_id, byOperator(ctx.operator)))),

  createSpace: operatorProcedure
    .input(z.object({ org_id: uuid, name }))
    .mutation(({ ctx, input }) => asOperatorError(() => createSpace(ctx.services.db, input.org_id, input.name, byOperator(ctx.operator)))),

  keys: operatorProcedure.input(z.object({ org_id: uuid })).query(({ ctx, input }) => listApiKeys(ctx.services.db, input.org_id)),

  createKey: operatorProcedure
    .input(
      z.object({
        org_id: uuid,
        scopes: z.array(z.string().refine(isScope, 'unknown scope')).min(1).max(20),
        space_ids: z.array(uuid).max(50),
        env: z.enum(['live', 'test']),
      }),
    )
    .mutation(({ ctx, input }) =>
      asOperatorError(() =>
        createApiKey(ctx.services.db, { orgId: input.org_id, scopes: input.scopes, spaceIds: input.space_ids, env: input.env }, byOperator(ctx.operator)),
      ),
    ),

  revokeKey: operatorProcedure
    .input(z.object({ key_id: z.string().max(50) }))
    .mutation(({ ctx, input }) => asOperatorError(() => revokeApiKey(ctx.services.db, input.key_id, { publicUrl: ctx.services.config.http.publicUrl, origin: byOperator(ctx.operator) }))),

  pendingEscalations: operatorProcedure.query(({ ctx }) => pendingEscalations(ctx.services.db)),

  answerEscalation: operatorProcedure
    .input(z.object({ id: z.string().max(200), answer: z.string().max(20_000), cleared: z.boolean() }))
    .mutation(async ({ ctx, input }) => {
      const id = parsePublicId('escalation', input.id);
      const [row] = id === null ? [] : await ctx.services.db.select().from(escalations).where(eq(escalations.id, id));
      if (row === undefined) throw new TRPCError({ code: 'NOT_FOUND', message: 'No such escalation.' });
      return resolveEscalation(
        ctx.services,
        row,
        { answer: input.answer === '' ? undefined : input.answer, cleared: input.cleared, resolved_by: `operator:${ctx.operator.name}` },
        { requestId: null, via: 'console' },
      );
    }),
});

export type ConsoleAppRouter = typeof consoleAppRouter;
