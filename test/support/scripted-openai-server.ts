import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';

/**
 * A local stand-in for an OpenAI-compatible endpoint, for tests: POST /chat/completions
 * (non-streaming; the agent never streams) answers with the next scripted reply and records
 * every request. It listens on 127.0.0.1 on a free port.
 */

export type ScriptedReply = (
  | { toolCalls: Array<{ name: string; arguments: string | Record<string, unknown> }> }
  | { text: string }
  | { status: number; body?: string }
) & {
  /** Wait this long before answering (a model that is slow to think). */
  delayMs?: number;
};

const ChatMessageSchema = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string().optional() })), z.null()]).optional(),
});

/** The parts of a chat completion request the tests look at; other fields are kept. */
export const ChatRequestSchema = z.looseObject({
  model: z.string(),
  messages: z.array(ChatMessageSchema),
  tools: z.array(z.looseObject({ type: z.string(), function: z.looseObject({ name: z.string() }) })).optional(),
  tool_choice: z.unknown().optional(),
  stream: z.boolean().optional(),
});
export type ChatRequest = z.infer<typeof ChatRequestSchema>;

export interface RecordedChatRequest {
  path: string;
  authorization: string | undefined;
  body: ChatRequest;
}

export interface ScriptedOpenAiServer {
  /** Base URL to hand to the model planner, ending in /v1. */
  readonly baseUrl: string;
  readonly requests: RecordedChatRequest[];
  /** Appends replies to the script. */
  push(...replies: ScriptedReply[]): void;
  close(): Promise<void>;
}

/** When the script runs out the server answers 500, which a planner must treat as an error. */
const EXHAUSTED: ScriptedReply = { status: 500, body: '{"error":{"message":"scripted server has no reply left"}}' };

export async function startScriptedOpenAiServer(replies: ScriptedReply[] = []): Promise<ScriptedOpenAiServer> {
  const script = [...replies];
  const requests: RecordedChatRequest[] = [];
  let callCount = 0;

  const server = createServer((request, response) => {
    void answer(request, response);
  });

  async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    if (request.method !== 'POST' || path !== '/v1/chat/completions') {
      sendJson(response, 404, { error: { message: 'not found' } });
      return;
    }
    const parsed = ChatRequestSchema.safeParse(parseJson(await readBody(request)));
    if (!parsed.success || parsed.data.stream === true) {
      sendJson(response, 400, { error: { message: 'this scripted server takes non-streaming chat requests only' } });
      return;
    }
    requests.push({ path, authorization: request.headers.authorization, body: parsed.data });
    const reply = script.shift() ?? EXHAUSTED;
    if (reply.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    callCount += 1;
    if ('status' in reply) {
      response.writeHead(reply.status, { 'content-type': 'application/json' });
      response.end(reply.body ?? '{"error":{"message":"scripted failure"}}');
      return;
    }
    const message =
      'text' in reply
        ? { role: 'assistant', content: reply.text }
        : {
            role: 'assistant',
            content: null,
            tool_calls: reply.toolCalls.map((call, index) => ({
              id: `call_${callCount}_${index}`,
              type: 'function',
              function: {
                name: call.name,
                arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
              },
            })),
          };
    sendJson(response, 200, {
      id: `chatcmpl-${callCount}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: parsed.data.model,
      choices: [{ index: 0, message, finish_reason: 'text' in reply ? 'stop' : 'tool_calls' }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    push: (...more) => {
      script.push(...more);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        // Slow replies may still hold sockets; a closing test must not wait for them.
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
