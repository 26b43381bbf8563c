import { z } from 'zod';
import { revokeSession } from '../../domain/sessions/session-operations';
import { writeGated } from '../../trpc/procedures';

export const revokeSessionProcedure = writeGated('operator:sessions:write')
  .meta({ openapi: { method: 'DELETE', path: '/sessions/{id}', tags: ['sessions'], summary: 'Revoke a session; its open sockets close at once' }, successStatus: 204 })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(z.void())
  .mutation(({ ctx, input }) => revokeSession(ctx.services, ctx.principal, ctx.requestId, input.id));
