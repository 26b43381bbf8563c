import { z } from 'zod';
import { deleteCredential } from '../../domain/credentials/credential-operations';
import { actorOf } from '../../domain/keys/principal';
import { writeGated } from '../../trpc/procedures';

export const deleteCredentialProcedure = writeGated('operator:credentials:write')
  .meta({ openapi: { method: 'DELETE', path: '/credentials/{id}', tags: ['credentials'], summary: 'Delete a credential and its pushed codes' }, successStatus: 204 })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(z.void())
  .mutation(({ ctx, input }) => deleteCredential(ctx.services.db, ctx.principal, actorOf(ctx.principal, ctx.requestId), input.id));
