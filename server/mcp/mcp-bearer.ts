import type { IncomingMessage } from 'node:http';
import { protectedResourceMetadataUrl } from '../domain/mcp-oauth/oauth-urls';

/**
 * RFC 9728 §5.1 / RFC 6750 §3: a 401 of /mcp names the protected resource metadata, where
 * MCP clients (which read every 401 as an OAuth challenge) discover the authorization
 * server; `invalid_token` only when a bearer was presented.
 */
export function mcpChallenge(publicUrl: string, req: IncomingMessage): string {
  const presented = req.headers.authorization !== undefined;
  return `Bearer resource_metadata="${protectedResourceMetadataUrl(publicUrl)}"${presented ? ', error="invalid_token"' : ''}`;
}
