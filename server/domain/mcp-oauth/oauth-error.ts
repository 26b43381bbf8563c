// The error answers of the OAuth endpoints (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 7009 §2.2.1):
// `{"error": "<code>", "error_description": "..."}`, the shape OAuth clients (the MCP SDK
// among them) parse, rather than CONTRACT.md's body, which only /mcp and /v1 answer.

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'unsupported_token_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'access_denied'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'temporarily_unavailable';

export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    message: string,
    /** 401 for invalid_client, 429 for a registration over its limit, 400 otherwise. */
    readonly status: 400 | 401 | 429 = code === 'invalid_client' ? 401 : 400,
  ) {
    super(message);
  }
}
