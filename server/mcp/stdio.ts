// `npm run mcp`: the MCP server over stdio, for MCP clients that start their tools as
// processes (Claude Desktop, IDEs). A client of a running service's REST API, configured
// by OPERATOR_API_KEY and OPERATOR_BASE_URL. stdout carries the protocol only.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { OperatorClient } from '@browser-device-operator/sdk';
import { loadConfig } from '../core/config';
import { sdkBackend } from './sdk-backend';
import { createOperatorMcpServer } from './tools';

const { mcpClient } = loadConfig();
if (mcpClient.apiKey === null) {
  process.stderr.write('OPERATOR_API_KEY is not set: the MCP server calls the API with that key.\n');
  process.exit(1);
}
const server = createOperatorMcpServer(sdkBackend(new OperatorClient({ apiKey: mcpClient.apiKey, baseUrl: mcpClient.baseUrl })));
await server.connect(new StdioServerTransport());
