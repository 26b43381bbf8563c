import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { EntryServices } from '../api/entry-point';
import { ApiError } from '../core/errors';
import { protectedResourceMetadataUrl } from '../domain/mcp-oauth/oauth-urls';
import { resolveCaller } from '../http/resolve-caller';
import { readJsonBody } from '../http/read-json-body';
import { sendErrorResponse } from '../trpc/send-error';
import { httpBackend } from './http-backend';
import { stampRequestId } from './stamp-request-id';
import { createOperatorMcpServer } from './tools';

export const MCP_PATH = '/mcp';

/**
 * `/mcp`: the MCP server over Streamable HTTP, stateless (one server and transport per
 * POST, nothing kept between requests, so any instance serves any call). The bearer, an
 * API key or an OAuth access token (docs/api.md, "MCP authorization"), is checked (401
 * naming the protected resource metadata, then the rate limit's 429) before anything is
 * read; each tool's procedure then checks the scope it needs.
 */
export function createMcpHandler(services: EntryServices) {
  return async function handleMcp(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    try {
      const { principal } = await resolveCaller(services, req, res, { kind: 'mcp_bearer' });
      if (req.method !== 'POST') {
        res.setHeader('Allow', 'POST');
        throw new ApiError('method_not_allowed', { message: 'This MCP server is stateless: POST JSON-RPC messages to /mcp.' });
      }
      const body = await readJsonBody(req);
      if (!body.ok) throw body.error;
      const server = createOperatorMcpServer(httpBackend(services, { req, requestId, principal }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      const send = transport.send.bind(transport);
      transport.send = (message, options) => send(stampRequestId(message, requestId), options);
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body.body);
    } catch (error) {
      if (error instanceof ApiError && error.apiCode === 'invalid_api_key') res.setHeader('WWW-Authenticate', mcpChallenge(services.config.http.publicUrl, req));
      sendErrorResponse(services.log, res, requestId, error);
    }
  };
}

/**
 * RFC 9728 §5.1 / RFC 6750 §3: a 401 of /mcp names the protected resource metadata, where
 * MCP clients (which read every 401 as an OAuth challenge) discover the authorization
 * server; `invalid_token` only when a bearer was presented.
 */
function mcpChallenge(publicUrl: string, req: IncomingMessage): string {
  const presented = req.headers.authorization !== undefined;
  return `Bearer resource_metadata="${protectedResourceMetadataUrl(publicUrl)}"${presented ? ', error="invalid_token"' : ''}`;
}
