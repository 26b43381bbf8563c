import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * Every error /mcp answers carries a request id, as every error of the service does
 * (CONTRACT.md): a JSON-RPC error gets it in `error.data.request_id`; a tool error the SDK
 * made itself (arguments that fail the tool's schema, an unknown tool) becomes the
 * CONTRACT.md body `invalid_request` with it. Tool errors of the service already carry
 * the id of the call that failed.
 */
export function stampRequestId(message: JSONRPCMessage, requestId: string): JSONRPCMessage {
  if ('error' in message) {
    const data = message.error.data;
    const fields = typeof data === 'object' && data !== null && !Array.isArray(data) ? data : data === undefined ? {} : { detail: data };
    return { ...message, error: { ...message.error, data: { ...fields, request_id: requestId } } };
  }
  if (!('result' in message) || message.result.isError !== true) return message;
  const content = message.result.content;
  if (!Array.isArray(content) || content.length !== 1) return message;
  const [block] = content as Array<{ type?: unknown; text?: unknown }>;
  if (block?.type !== 'text' || typeof block.text !== 'string' || isErrorBody(block.text)) return message;
  const body = { error: { code: 'invalid_request', message: block.text, request_id: requestId } };
  return { ...message, result: { ...message.result, content: [{ type: 'text', text: JSON.stringify(body) }] } };
}

function isErrorBody(text: string): boolean {
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown } };
    return typeof parsed.error?.code === 'string';
  } catch {
    return false;
  }
}
