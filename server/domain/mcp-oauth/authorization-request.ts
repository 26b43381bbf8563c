import type { Db } from '../../../db/client';
import { isScope, type Scope } from '../keys/scopes';
import { findClient, type OAuthClient } from './oauth-client';
import { OAuthError } from './oauth-error';
import { mcpResourceUrl } from './oauth-urls';

/** A checked authorization request (RFC 6749 §4.1.1 with PKCE, RFC 7636, and RFC 8707's resource). */
export interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  /** The scopes asked for; null when the client named none (then: all of the key's). */
  scopes: Scope[] | null;
  resource: string;
}

export type AuthorizationCheck =
  | { ok: true; request: AuthorizationRequest }
  /**
   * `redirectUri` null: the client or its redirect URI is not known, so the person is shown
   * the error and never sent anywhere (RFC 6749 §4.1.2.1); otherwise the error goes back to
   * the client at its redirect URI.
   */
  | { ok: false; error: OAuthError; redirectUri: string | null; state: string | null };

const PARAMETERS = ['response_type', 'client_id', 'redirect_uri', 'state', 'scope', 'code_challenge', 'code_challenge_method', 'resource'] as const;
const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** Checks the parameters of /oauth/authorize, the same for the page (GET) and the person's answer (POST). */
export async function checkAuthorizationRequest(db: Db, publicUrl: string, params: URLSearchParams): Promise<AuthorizationCheck> {
  const fail = (error: OAuthError, redirectUri: string | null = null, state: string | null = null): AuthorizationCheck => ({ ok: false, error, redirectUri, state });
  for (const name of PARAMETERS) {
    if (params.getAll(name).length > 1) return fail(new OAuthError('invalid_request', `${name} is repeated.`));
  }
  const clientId = params.get('client_id');
  const client = clientId === null ? null : await findClient(db, clientId);
  if (client === null) return fail(new OAuthError('invalid_client', 'This client is not registered with the service (or its registration lapsed); add the connector again.'));
  const redirectUri = params.get('redirect_uri') ?? (client.redirectUris.length === 1 ? client.redirectUris[0]! : null);
  // Exact string match against the registration (OAuth 2.1 §4.1.1, no prefix or pattern matching).
  if (redirectUri === null || !client.redirectUris.includes(redirectUri)) {
    return fail(new OAuthError('invalid_request', 'The redirect_uri is not one this client registered.'));
  }

  const state = params.get('state');
  const back = (error: OAuthError) => fail(error, redirectUri, state);
  if (state !== null && state.length > 1000) return back(new OAuthError('invalid_request', 'state is longer than 1000 characters.'));
  if (params.get('response_type') !== 'code') return back(new OAuthError('unsupported_response_type', 'Only response_type=code is supported.'));
  const codeChallenge = params.get('code_challenge');
  if (codeChallenge === null || !CODE_CHALLENGE.test(codeChallenge)) return back(new OAuthError('invalid_request', 'A PKCE code_challenge (43 base64url characters) is required.'));
  if (params.get('code_challenge_method') !== 'S256') return back(new OAuthError('invalid_request', 'code_challenge_method must be S256.'));

  const resource = params.get('resource') ?? mcpResourceUrl(publicUrl);
  if (resource !== mcpResourceUrl(publicUrl)) return back(new OAuthError('invalid_target', `The only resource is ${mcpResourceUrl(publicUrl)}.`));

  const scope = params.get('scope')?.trim() ?? '';
  const named = scope === '' ? [] : scope.split(/ +/);
  const unknown = named.find((name) => !isScope(name));
  if (unknown !== undefined) return back(new OAuthError('invalid_scope', `Unknown scope ${unknown.slice(0, 100)}.`));
  const scopes = named.length === 0 ? null : [...new Set(named as Scope[])];

  return { ok: true, request: { client, redirectUri, state, codeChallenge, scopes, resource } };
}

/** Where the person's browser is sent back: the redirect URI with the answer's parameters added. */
export function redirectWith(redirectUri: string, values: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(values)) if (value !== null) url.searchParams.set(name, value);
  return url.toString();
}
