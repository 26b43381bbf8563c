import { scopes } from '../keys/scopes';
import { mcpResourceUrl, OAUTH_PATHS } from './oauth-urls';

// What the authorization server is and supports, as its metadata documents tell clients:
// the grants, the PKCE method and the client authentications token-grant.ts and
// oauth-client.ts implement.

/** RFC 9728: what /mcp is and who issues its tokens. */
export function protectedResourceMetadata(publicUrl: string) {
  return {
    resource: mcpResourceUrl(publicUrl),
    authorization_servers: [publicUrl],
    scopes_supported: [...scopes],
    bearer_methods_supported: ['header'],
    resource_name: 'Browser Device Operator MCP server',
    resource_documentation: `${publicUrl}/docs`,
  };
}

/** RFC 8414: the service's authorization server. */
export function authorizationServerMetadata(publicUrl: string) {
  return {
    issuer: publicUrl,
    authorization_endpoint: `${publicUrl}${OAUTH_PATHS.authorize}`,
    token_endpoint: `${publicUrl}${OAUTH_PATHS.token}`,
    registration_endpoint: `${publicUrl}${OAUTH_PATHS.register}`,
    revocation_endpoint: `${publicUrl}${OAUTH_PATHS.revoke}`,
    scopes_supported: [...scopes],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${publicUrl}/docs`,
  };
}
