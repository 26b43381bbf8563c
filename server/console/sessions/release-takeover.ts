import { z } from 'zod';
import { releaseAsOperator } from '../../domain/console/operator-live';
import { ReleaseResultSchema } from '../../domain/sessions/session-operations';
import { operatorProcedure } from '../console-procedures';

/** Releases a console takeover; the task resumes (POST /v1/sessions/{id}/release's rules). */
export const releaseTakeoverProcedure = operatorProcedure
  .input(z.object({ session_id: z.string().max(200) }))
  .output(ReleaseResultSchema)
  .mutation(({ ctx, input }) => releaseAsOperator(ctx.services, ctx.operator, ctx.requestId, input.session_id));
