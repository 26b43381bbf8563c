// Where the MCP authorization pieces live, all under the service's public URL
// (OPERATOR_PUBLIC_URL): the issuer is the service itself, the protected resource is /mcp.

export const OAUTH_PATHS = {
  authorize: '/oauth/authorize',
  token: '/oauth/token',
  register: '/oauth/register',
  revoke: '/oauth/revoke',
  authorizationServerMetadata: '/.well-known/oauth-authorization-server',
  protectedResourceMetadata: '/.well-known/oauth-protected-resource',
} as const;

/** The RFC 8707 resource every token is bound to. */
export function mcpResourceUrl(publicUrl: string): string {
  return `${publicUrl}/mcp`;
}

/** RFC 9728 §3.1: the metadata of a resource with a path is at the well-known path followed by that path. */
export function protectedResourceMetadataUrl(publicUrl: string): string {
  return `${publicUrl}${OAUTH_PATHS.protectedResourceMetadata}/mcp`;
}
