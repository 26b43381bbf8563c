import { z } from 'zod';
import { PushCodeInputSchema, pushCredentialCode, PushedCodeSchema } from '../domain/credentials/credential-codes';
import { createCredential, CreateCredentialBodySchema, deleteCredential, getCredential, listCredentials, ListCredentialsQuerySchema, updateCredential, UpdateCredentialInputSchema } from '../domain/credentials/credential-operations';
import { CredentialSchema, loadCredentialForCaller } from '../domain/credentials/credential-resource';
import { actorOf } from '../domain/keys/principal';
import { scoped, writeGated, writeGatedOn } from '../trpc/procedures';

// /v1/credentials: the vault's credentials and their pushed one-time codes.

export const createCredentialProcedure = writeGated('operator:credentials:write')
  .meta({ openapi: { method: 'POST', path: '/credentials', tags: ['credentials'], summary: 'Store a credential in the vault; its secret values are never returned' }, successStatus: 201 })
  .input(CreateCredentialBodySchema)
  .output(CredentialSchema)
  .mutation(({ ctx, input }) => createCredential(ctx.services, ctx.principal, actorOf(ctx.principal, ctx.requestId), input));

export const listCredentialsProcedure = scoped('operator:credentials:read')
  .meta({ openapi: { method: 'GET', path: '/credentials', tags: ['credentials'], summary: 'List credentials, newest first' } })
  .input(ListCredentialsQuerySchema)
  .output(z.object({ data: z.array(CredentialSchema), next_cursor: z.string() }))
  .query(({ ctx, input }) => listCredentials(ctx.services.db, ctx.services.cursors, ctx.principal, input));

export const getCredentialProcedure = scoped('operator:credentials:read')
  .meta({ openapi: { method: 'GET', path: '/credentials/{id}', tags: ['credentials'], summary: 'Get a credential: what it holds, never a value' } })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(CredentialSchema)
  .query(({ ctx, input }) => getCredential(ctx.services.db, ctx.principal, input.id));

export const updateCredentialProcedure = writeGated('operator:credentials:write')
  .meta({ openapi: { method: 'PATCH', path: '/credentials/{id}', tags: ['credentials'], summary: 'Replace fields of a credential (rotate its password or TOTP secret); null removes a value' } })
  .input(UpdateCredentialInputSchema)
  .output(CredentialSchema)
  .mutation(({ ctx, input }) => updateCredential(ctx.services, ctx.principal, actorOf(ctx.principal, ctx.requestId), input));

export const deleteCredentialProcedure = writeGated('operator:credentials:write')
  .meta({ openapi: { method: 'DELETE', path: '/credentials/{id}', tags: ['credentials'], summary: 'Delete a credential and its pushed codes' }, successStatus: 204 })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(z.void())
  .mutation(({ ctx, input }) => deleteCredential(ctx.services.db, ctx.principal, actorOf(ctx.principal, ctx.requestId), input.id));

export const pushCredentialCodeProcedure = writeGatedOn('operator:credentials:write', 'credential_not_found', loadCredentialForCaller)
  .meta({ openapi: { method: 'POST', path: '/credentials/{id}/codes', tags: ['credentials'], summary: 'Push a one-time code (SMS, e-mail) for the next fill of the credential; valid 5 minutes, used once' }, successStatus: 201 })
  .input(PushCodeInputSchema)
  .output(PushedCodeSchema)
  .mutation(({ ctx, input }) => pushCredentialCode(ctx.services, ctx.principal, actorOf(ctx.principal, ctx.requestId), input));
