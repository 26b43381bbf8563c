import { and, count, eq, gt, lt, notExists, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Db } from '../../../db/client';
import { mcpOauthClients, mcpOauthGrants } from '../../../db/schema';
import { mintSecret } from '../secret-hash';
import { OAuthError } from './oauth-error';
import { REGISTRATIONS_PER_ADDRESS_PER_HOUR, UNAPPROVED_CLIENT_TTL_MS } from './oauth-lifetimes';
import { CLIENT_SECRET_PREFIX, newClientId } from './oauth-secrets';

const AUTH_METHODS = ['none', 'client_secret_post', 'client_secret_basic'] as const;

/** RFC 7591 §2 metadata this server reads; anything else a client sends is ignored. */
const RegistrationSchema = z.object({
  redirect_uris: z.array(z.string().max(2000)).min(1).max(10),
  client_name: z.string().trim().min(1).max(100).optional(),
  // RFC 7591's default; public clients (the MCP SDK's, the Inspector's) send `none`.
  token_endpoint_auth_method: z.enum(AUTH_METHODS).default('client_secret_basic'),
  grant_types: z.array(z.enum(['authorization_code', 'refresh_token'])).default(['authorization_code', 'refresh_token']),
  response_types: z.array(z.literal('code')).default(['code']),
});

// Schemes a browser must never be sent to with a code.
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'about:', 'blob:', 'ftp:', 'ws:', 'wss:']);
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * A redirect URI a code may be sent to: https, http only on a loopback host (RFC 8252
 * §7.3, native apps and the MCP Inspector), or a native app's private-use scheme; never
 * with a fragment (RFC 6749 §3.1.2) or user information.
 */
function redirectUriProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.hash !== '' || value.includes('#')) return 'must not have a fragment';
  if (url.username !== '' || url.password !== '') return 'must not contain user information';
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `must not use ${url.protocol}`;
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) return 'must use https unless its host is loopback';
  return null;
}

export interface RegisteredClient {
  client_id: string;
  client_secret?: string;
  client_id_issued_at: number;
  client_secret_expires_at?: 0;
  client_name: string;
  redirect_uris: string[];
  token_endpoint_auth_method: (typeof AUTH_METHODS)[number];
  grant_types: string[];
  response_types: string[];
}

/**
 * RFC 7591 dynamic registration, open as the MCP authorization spec expects, and bounded:
 * one address may register REGISTRATIONS_PER_ADDRESS_PER_HOUR clients an hour, and clients
 * nobody approved within a day are removed as new ones come.
 */
export async function registerClient(db: Db, metadata: unknown, address: string): Promise<RegisteredClient> {
  const parsed = RegistrationSchema.safeParse(metadata);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path[0];
    const code = field === 'redirect_uris' ? 'invalid_redirect_uri' : 'invalid_client_metadata';
    throw new OAuthError(code, `${issue.path.join('.') || 'metadata'}: ${issue.message}`);
  }
  const input = parsed.data;
  for (const uri of input.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem !== null) throw new OAuthError('invalid_redirect_uri', `The redirect URI ${problem}.`);
  }
  if (!input.grant_types.includes('authorization_code')) throw new OAuthError('invalid_client_metadata', 'grant_types must include authorization_code.');

  const hourAgo = new Date(Date.now() - 3600_000);
  const [recent] = await db
    .select({ n: count() })
    .from(mcpOauthClients)
    .where(and(eq(mcpOauthClients.registeredFrom, address), gt(mcpOauthClients.createdAt, hourAgo)));
  if ((recent?.n ?? 0) >= REGISTRATIONS_PER_ADDRESS_PER_HOUR) throw new OAuthError('temporarily_unavailable', 'Too many client registrations from this address; retry in an hour.', 429);
  await db
    .delete(mcpOauthClients)
    .where(
      and(
        lt(mcpOauthClients.createdAt, new Date(Date.now() - UNAPPROVED_CLIENT_TTL_MS)),
        notExists(db.select({ one: sql`1` }).from(mcpOauthGrants).where(eq(mcpOauthGrants.clientId, mcpOauthClients.id))),
      ),
    );

  const clientId = newClientId();
  const secret = input.token_endpoint_auth_method === 'none' ? null : mintSecret(CLIENT_SECRET_PREFIX);
  const clientName = input.client_name ?? 'Unnamed MCP client';
  const [row] = await db
    .insert(mcpOauthClients)
    .values({
      clientId,
      clientName,
      tokenEndpointAuthMethod: input.token_endpoint_auth_method,
      secretHash: secret?.hash ?? null,
      redirectUris: input.redirect_uris,
      registeredFrom: address,
    })
    .returning({ createdAt: mcpOauthClients.createdAt });
  return {
    client_id: clientId,
    ...(secret === null ? {} : { client_secret: secret.secret, client_secret_expires_at: 0 as const }),
    client_id_issued_at: Math.floor(row!.createdAt.getTime() / 1000),
    client_name: clientName,
    redirect_uris: input.redirect_uris,
    token_endpoint_auth_method: input.token_endpoint_auth_method,
    grant_types: input.grant_types,
    response_types: input.response_types,
  };
}
