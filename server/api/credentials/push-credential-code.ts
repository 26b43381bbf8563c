import { pushCredentialCode, PushCodeInputSchema, PushedCodeSchema } from '../../domain/credentials/credential-codes';
import { actorOf } from '../../domain/keys/principal';
import { writeGatedOnCredential } from './credential-first';

export const pushCredentialCodeProcedure = writeGatedOnCredential('operator:credentials:write')
  .meta({ openapi: { method: 'POST', path: '/credentials/{id}/codes', tags: ['credentials'], summary: 'Push a one-time code (SMS, e-mail) for the next fill of the credential; valid 5 minutes, used once' }, successStatus: 201 })
  .input(PushCodeInputSchema)
  .output(PushedCodeSchema)
  .mutation(({ ctx, input }) => pushCredentialCode(ctx.services, ctx.principal, actorOf(ctx.principal, ctx.requestId), input));
