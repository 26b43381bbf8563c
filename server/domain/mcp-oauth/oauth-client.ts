import { eq } from 'drizzle-orm';
import type { DbOrTx } from '../../../db/client';
import { mcpOauthClients } from '../../../db/schema';
import { secretMatches } from '../secret-hash';
import { OAuthError } from './oauth-error';

export interface OAuthClient {
  id: string;
  clientId: string;
  clientName: string;
  redirectUris: string[];
  secretHash: string | null;
}

/** What a client presented at the token or revocation endpoint (body or HTTP Basic). */
export interface ClientCredentials {
  clientId: string | null;
  clientSecret: string | null;
}

export async function findClient(db: DbOrTx, clientId: string): Promise<OAuthClient | null> {
  if (clientId.length > 200) return null;
  const [row] = await db
    .select({ id: mcpOauthClients.id, clientId: mcpOauthClients.clientId, clientName: mcpOauthClients.clientName, redirectUris: mcpOauthClients.redirectUris, secretHash: mcpOauthClients.secretHash })
    .from(mcpOauthClients)
    .where(eq(mcpOauthClients.clientId, clientId));
  return row ?? null;
}

/**
 * RFC 6749 §2.3: a public client names itself; a confidential one proves it with its
 * secret (in the body or by HTTP Basic, whichever it registered). 401 invalid_client otherwise.
 */
export async function authenticateClient(db: DbOrTx, credentials: ClientCredentials): Promise<OAuthClient> {
  if (credentials.clientId === null) throw new OAuthError('invalid_client', 'client_id is required.');
  const client = await findClient(db, credentials.clientId);
  if (client === null) throw new OAuthError('invalid_client', 'No such client; register again.');
  if (client.secretHash !== null && (credentials.clientSecret === null || !secretMatches(credentials.clientSecret, client.secretHash))) {
    throw new OAuthError('invalid_client', 'The client secret is missing or wrong.');
  }
  return client;
}
