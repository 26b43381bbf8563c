import { updateCredential, UpdateCredentialInputSchema } from '../../domain/credentials/credential-operations';
import { CredentialSchema } from '../../domain/credentials/credential-resource';
import { actorOf } from '../../domain/keys/principal';
import { writeGated } from '../../trpc/procedures';

export const updateCredentialProcedure = writeGated('operator:credentials:write')
  .meta({ openapi: { method: 'PATCH', path: '/credentials/{id}', tags: ['credentials'], summary: 'Replace fields of a credential (rotate its password or TOTP secret); null removes a value' } })
  .input(UpdateCredentialInputSchema)
  .output(CredentialSchema)
  .mutation(({ ctx, input }) => updateCredential(ctx.services, ctx.principal, actorOf(ctx.principal, ctx.requestId), input));
