import { z } from 'zod';
import { listCredentials, ListCredentialsQuerySchema } from '../../domain/credentials/credential-operations';
import { CredentialSchema } from '../../domain/credentials/credential-resource';
import { scoped } from '../../trpc/procedures';

export const listCredentialsProcedure = scoped('operator:credentials:read')
  .meta({ openapi: { method: 'GET', path: '/credentials', tags: ['credentials'], summary: 'List credentials, newest first' } })
  .input(ListCredentialsQuerySchema)
  .output(z.object({ data: z.array(CredentialSchema), next_cursor: z.string() }))
  .query(({ ctx, input }) => listCredentials(ctx.services.db, ctx.services.cursors, ctx.principal, input));
