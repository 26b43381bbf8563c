import { createCredential, CreateCredentialBodySchema } from '../../domain/credentials/credential-operations';
import { CredentialSchema } from '../../domain/credentials/credential-resource';
import { actorOf } from '../../domain/keys/principal';
import { writeGated } from '../../trpc/procedures';

export const createCredentialProcedure = writeGated('operator:credentials:write')
  .meta({ openapi: { method: 'POST', path: '/credentials', tags: ['credentials'], summary: 'Store a credential in the vault; its secret values are never returned' }, successStatus: 201 })
  .input(CreateCredentialBodySchema)
  .output(CredentialSchema)
  .mutation(({ ctx, input }) => createCredential(ctx.services, ctx.principal, actorOf(ctx.principal, ctx.requestId), input));
