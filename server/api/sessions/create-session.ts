import { z } from 'zod';
import { mintSession, MintSessionBodySchema } from '../../domain/sessions/mint-session';
import { MintedSessionSchema } from '../../domain/sessions/session-resource';
import { writeGated } from '../../trpc/procedures';

export const createSessionProcedure = writeGated('operator:sessions:write')
  .meta({
    openapi: {
      method: 'POST',
      path: '/devices/{id}/sessions',
      tags: ['sessions'],
      summary: 'Mint a live-view session (control mode also needs operator:sessions:control)',
    },
    successStatus: 201,
  })
  .input(MintSessionBodySchema.extend({ id: z.string().max(200) }))
  .output(MintedSessionSchema)
  .mutation(({ ctx, input: { id, ...body } }) =>
    mintSession(ctx.services.db, ctx.services.config.http.publicUrl, { principal: ctx.principal, requestId: ctx.requestId, devicePublicId: id, body }),
  );
