import { z } from 'zod';
import { getCredential } from '../../domain/credentials/credential-operations';
import { CredentialSchema } from '../../domain/credentials/credential-resource';
import { scoped } from '../../trpc/procedures';

export const getCredentialProcedure = scoped('operator:credentials:read')
  .meta({ openapi: { method: 'GET', path: '/credentials/{id}', tags: ['credentials'], summary: 'Get a credential: what it holds, never a value' } })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(CredentialSchema)
  .query(({ ctx, input }) => getCredential(ctx.services.db, ctx.principal, input.id));
