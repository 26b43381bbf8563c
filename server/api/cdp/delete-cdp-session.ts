import { z } from 'zod';
import { deleteCdpSession } from '../../domain/cdp/cdp-connection';
import { writeGated } from '../../trpc/procedures';

export const deleteCdpSessionProcedure = writeGated('operator:sessions:control')
  .meta({
    openapi: {
      method: 'DELETE',
      path: '/cdp_sessions/{id}',
      tags: ['cdp'],
      summary: 'Close a CDP session: its URL stops working, its connection closes within a second and the device\'s slot is free',
    },
    successStatus: 204,
  })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(z.void())
  .mutation(({ ctx, input }) => deleteCdpSession(ctx.services.db, ctx.principal, ctx.requestId, input.id));
