import type { IncomingMessage } from 'node:http';
import { authenticateAccessToken } from '../domain/mcp-oauth/access-token';
import { isAccessToken } from '../domain/mcp-oauth/oauth-secrets';
import { mcpResourceUrl, protectedResourceMetadataUrl } from '../domain/mcp-oauth/oauth-urls';
import type { Principal } from '../domain/keys/principal';
import type { Services } from '../services/services';

/**
 * The bearer of /mcp: an API key (programs), or an access token of the service's OAuth
 * authorization server (remote MCP clients a person approved), under the same throttle
 * of failed authentications per address.
 */
export function authenticateMcpBearer(services: Services, req: IncomingMessage): Promise<Principal> {
  return services.authThrottle.check(req, () => {
    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization?.trim() ?? '')?.[1];
    if (bearer !== undefined && isAccessToken(bearer)) return authenticateAccessToken(services.db, mcpResourceUrl(services.config.http.publicUrl), bearer);
    return services.authenticator.authenticate(req.headers.authorization);
  });
}

/**
 * RFC 9728 §5.1 / RFC 6750 §3: a 401 of /mcp names the protected resource metadata, where
 * MCP clients (which read every 401 as an OAuth challenge) discover the authorization
 * server; `invalid_token` only when a bearer was presented.
 */
export function mcpChallenge(publicUrl: string, req: IncomingMessage): string {
  const presented = req.headers.authorization !== undefined;
  return `Bearer resource_metadata="${protectedResourceMetadataUrl(publicUrl)}"${presented ? ', error="invalid_token"' : ''}`;
}
