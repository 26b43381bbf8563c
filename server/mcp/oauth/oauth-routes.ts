import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../../core/errors';
import { authenticateClient } from '../../domain/mcp-oauth/oauth-client';
import { OAuthError } from '../../domain/mcp-oauth/oauth-error';
import { authorizationServerMetadata, protectedResourceMetadata } from '../../domain/mcp-oauth/oauth-metadata';
import { OAUTH_PATHS } from '../../domain/mcp-oauth/oauth-urls';
import { registerClient } from '../../domain/mcp-oauth/register-client';
import { revokeTokenOfClient } from '../../domain/mcp-oauth/revoke-grant';
import { grantTokens } from '../../domain/mcp-oauth/token-grant';
import { clientAddress, TrustedProxies } from '../../http/client-address';
import { readJsonBody } from '../../http/read-json-body';
import type { Services } from '../../services/services';
import { sendErrorResponse } from '../../trpc/send-error';
import { handleAuthorize } from './authorize-route';
import { clientCredentials, CORS_HEADERS, readForm, sendOAuthError, sendOAuthJson } from './oauth-http';

type Endpoint = (req: IncomingMessage, res: ServerResponse, requestId: string) => Promise<void>;

/**
 * The authorization server of /mcp (docs/api.md, "MCP authorization"). The endpoints
 * answer OAuth's error bodies; the consent page answers HTML; a path it does not know is
 * the usual CONTRACT.md 404.
 */
export function createOAuthHandler(services: Services) {
  const publicUrl = services.config.http.publicUrl;
  const proxies = new TrustedProxies(services.config.http.trustedProxies);
  const metadata = (document: unknown): Endpoint => async (_req, res) => sendOAuthJson(res, 200, document, { 'Cache-Control': 'public, max-age=300' });
  const routes: Record<string, { method: 'GET' | 'POST' | 'ANY'; handle: Endpoint }> = {
    [`${OAUTH_PATHS.protectedResourceMetadata}/mcp`]: { method: 'GET', handle: metadata(protectedResourceMetadata(publicUrl)) },
    [OAUTH_PATHS.protectedResourceMetadata]: { method: 'GET', handle: metadata(protectedResourceMetadata(publicUrl)) },
    [OAUTH_PATHS.authorizationServerMetadata]: { method: 'GET', handle: metadata(authorizationServerMetadata(publicUrl)) },
    [OAUTH_PATHS.register]: {
      method: 'POST',
      async handle(req, res) {
        const body = await readJsonBody(req);
        if (!body.ok) throw new OAuthError('invalid_client_metadata', body.error.message);
        sendOAuthJson(res, 201, await registerClient(services.db, body.body, clientAddress(req, proxies)));
      },
    },
    [OAUTH_PATHS.token]: {
      method: 'POST',
      async handle(req, res) {
        const form = await readForm(req);
        const client = await authenticateClient(services.db, clientCredentials(req, form));
        sendOAuthJson(res, 200, await grantTokens(services.db, client, form));
      },
    },
    [OAUTH_PATHS.revoke]: {
      method: 'POST',
      async handle(req, res, requestId) {
        const form = await readForm(req);
        const client = await authenticateClient(services.db, clientCredentials(req, form));
        const token = form.get('token');
        if (token === null) throw new OAuthError('invalid_request', 'token is required.');
        await revokeTokenOfClient(services.db, client, token, requestId);
        sendOAuthJson(res, 200, {});
      },
    },
    [OAUTH_PATHS.authorize]: { method: 'ANY', handle: (req, res, requestId) => handleAuthorize(services, req, res, requestId) },
  };

  return async function handleOAuth(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const route = routes[path];
    try {
      if (route === undefined) throw new ApiError('not_found');
      if (route.method !== 'ANY') {
        if (req.method === 'OPTIONS') {
          res.writeHead(204, CORS_HEADERS);
          res.end();
          return;
        }
        if (req.method !== route.method && !(route.method === 'GET' && req.method === 'HEAD')) {
          res.setHeader('Allow', `${route.method}, OPTIONS`);
          throw new ApiError('method_not_allowed');
        }
      }
      await route.handle(req, res, requestId);
    } catch (error) {
      if (error instanceof OAuthError) return sendOAuthError(res, requestId, error);
      sendErrorResponse(services.log, res, requestId, error);
    }
  };
}
