import { z } from 'zod';
import { getSession, SessionSchema } from '../../domain/sessions/session-resource';
import { scoped } from '../../trpc/procedures';

export const getSessionProcedure = scoped('operator:sessions:write')
  .meta({ openapi: { method: 'GET', path: '/sessions/{id}', tags: ['sessions'], summary: 'Get a session (never its token)' } })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(SessionSchema)
  .query(({ ctx, input }) => getSession(ctx.services.db, ctx.services.config.http.publicUrl, ctx.principal, input.id));
