import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import {
  generateText,
  jsonSchema,
  NoSuchToolError,
  tool,
  ToolChoiceViolationError,
  wrapLanguageModel,
  type ModelMessage,
  type StaticToolCall,
} from 'ai';
import { z } from 'zod';
import type { ActionTarget } from '../browser/types';
import { freeTextHelpKinds, type AgentAction } from './agent-action';
import type { JsonValue } from './json-value';
import type { ModelCallUsage } from './model-usage';
import { MODEL_SYSTEM_PROMPT, renderPlannerMessage } from './model-prompt';
import { normalizeUrl } from './normalize-url';
import { estimateTokens } from './token-estimate';
import { PlannerError, type Planner, type PlannerDecision, type PlannerInput, type PlannerRejection } from './planner';
import { VAULT_FIELDS, vaultPlaceholder, type VaultEntry } from './vault-fill';

export interface ModelPlannerOptions {
  /** OpenAI-compatible API base, e.g. `https://api.example.com/v1` (requests go to `/chat/completions`). */
  baseUrl: string;
  apiKey: string;
  model: string;
  /** Send a JPEG screenshot with every observation (for vision models). Default false. */
  screenshots?: boolean;
  /** Retries of a failed request (429, 5xx, network), with backoff. Default 2. */
  maxRetries?: number;
  /** Longest one planning request may take. Default 60 s. */
  requestTimeoutMs?: number;
  /** Bad replies in a row the model is told about and may retry (Planner.maxCorrections). Default 3. */
  maxCorrections?: number;
  /** Most estimated tokens one request may hold (token-estimate.ts). Default 24,000. */
  contextTokens?: number;
}

/**
 * What a request holds besides the messages' text, in estimated tokens: the tool
 * definitions as the SDK sends them (about 2,300 by token-estimate.ts) and the JSON around
 * the messages. The 60-step test checks whole requests against the budget.
 */
const TOOLS_AND_FRAMING_TOKENS = 2_800;
/**
 * The user message goes out as a JSON string, where every quote and line break (element
 * names are quoted, steps are lines) takes one more character; a tenth of its budget is
 * kept for that.
 */
const JSON_ESCAPING_SHARE = 0.1;
/**
 * What a screenshot costs. Providers bill an image by its size, not its base64 length: a
 * viewport-sized JPEG costs about 800 to 1,500 tokens on the common vision models.
 */
const SCREENSHOT_TOKENS = 1_500;

const TargetSchema = z
  .union([z.number().int().nonnegative(), z.string().min(1)])
  .describe('The element ref number from the element list, or else its visible text or a CSS selector.');

/** Every tool carries an optional reason, recorded as the step's note. */
const reason = z.string().optional().describe('One short sentence: why this step.');

/** One tool per action; none has `execute`, so the SDK hands the call back instead of running it. */
const PLANNER_TOOLS = {
  navigate: tool({
    description: 'Open a URL in the page.',
    inputSchema: z.object({ url: z.string().min(1), reason }),
  }),
  click: tool({
    description: 'Click an element.',
    inputSchema: z.object({ target: TargetSchema, reason }),
  }),
  download: tool({
    description: 'Click an element that downloads a file, wait for the download and keep the file for the user.',
    inputSchema: z.object({ target: TargetSchema, reason }),
  }),
  type: tool({
    description: 'Type text into a form field.',
    inputSchema: z.object({ text: z.string(), target: TargetSchema, reason }),
  }),
  press: tool({
    description: 'Press a keyboard key, e.g. Enter, Tab, Escape, ArrowDown, Control+A.',
    inputSchema: z.object({ key: z.string().regex(/^[A-Za-z0-9]+(\+[A-Za-z0-9]+)*$/), reason }),
  }),
  scroll: tool({
    description: 'Scroll the page by about one screen.',
    inputSchema: z.object({ direction: z.enum(['up', 'down']), reason }),
  }),
  wait_for_text: tool({
    description: 'Wait until the given text appears on the page.',
    inputSchema: z.object({ text: z.string().min(1), reason }),
  }),
  extract_title: tool({
    description: 'Finish the task; its result is the page title.',
    inputSchema: z.object({ reason }),
  }),
  extract_url: tool({
    description: 'Finish the task; its result is the page URL.',
    inputSchema: z.object({ reason }),
  }),
  extract_text: tool({
    description: 'Finish the task; its result is the text of the first element matching a CSS selector.',
    inputSchema: z.object({ selector: z.string().min(1), reason }),
  }),
  finish: tool({
    description: 'Finish the task with the answer for the user.',
    inputSchema: z.object({ answer: z.string(), reason }),
  }),
  ask_human: tool({
    description:
      'Pause the task and ask a human for what only a person can do: answer a question (question), solve a captcha (captcha), or get past anything else that blocks the task (blocked). For a sign-in use ask_human_credentials or ask_human_takeover.',
    inputSchema: z.object({ question: z.string().min(1).max(2_000), kind: z.enum(freeTextHelpKinds).default('question'), reason }),
  }),
  ask_human_choice: tool({
    description: 'Pause the task and ask a human to pick one of the options (or several, with multiple: true).',
    inputSchema: z.object({
      question: z.string().min(1).max(2_000),
      options: z.array(z.string().min(1).max(200)).min(2).max(20),
      multiple: z.boolean().default(false),
      reason,
    }),
  }),
  ask_human_confirm: tool({
    description: 'Pause the task and ask a human to confirm (yes or no) before a consequential step such as a purchase or a submit. A no ends the task.',
    inputSchema: z.object({ question: z.string().min(1).max(2_000), reason }),
  }),
  ask_human_credentials: tool({
    description:
      'Pause the task and ask a human to fill secret fields (a password, a one-time code). You never see the values: to type one, call type with the text {{<field>}}.',
    inputSchema: z.object({
      question: z.string().min(1).max(2_000),
      fields: z.array(z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/)).min(1).max(10),
      reason,
    }),
  }),
  fill_credential: tool({
    description:
      "Fill a form field from a vault credential the task lists, unseen: username, password, totp (an authenticator code) or code (one sent by SMS or e-mail). Only on the credential's domains.",
    inputSchema: z.object({ name: z.string().regex(/^[a-z0-9_-]{1,64}$/), field: z.enum(VAULT_FIELDS), target: TargetSchema, reason }),
  }),
  ask_human_takeover: tool({
    description: 'Pause the task and ask a human to act in the page themselves (a captcha, a complex sign-in), then hand it back.',
    inputSchema: z.object({ question: z.string().min(1).max(2_000), reason }),
  }),
};

type PlannerTools = typeof PLANNER_TOOLS;

/**
 * The tools of one request: with an output schema, `finish` takes the answer as an object
 * of that schema (sent to the model as the tool's parameters; the agent checks it with Ajv
 * and sends a reply that does not match back as a correction).
 */
function toolsFor(outputSchema: object | null): PlannerTools {
  if (outputSchema === null) return PLANNER_TOOLS;
  const finish = tool({
    description: 'Finish the task with the answer for the user: `answer` must match the output schema.',
    inputSchema: jsonSchema<{ answer: unknown; reason?: string }>({
      type: 'object',
      properties: { answer: outputSchema, reason: { type: 'string', description: 'One short sentence: why this step.' } },
      required: ['answer'],
      additionalProperties: false,
    }),
  });
  return { ...PLANNER_TOOLS, finish } as unknown as PlannerTools;
}

/**
 * Plans with a model behind any OpenAI-compatible chat completions endpoint, one tool call
 * per step. Each request is self-contained: the fixed system prompt plus one user message
 * with the task, a compact history and the current observation (model-prompt.ts), so a
 * resumed task needs nothing but its recorded steps. The message is cut to keep the whole
 * request within `contextTokens` (model-prompt.ts says what gives way).
 *
 * A reply that cannot be carried out (no tool call, more than one, an unknown tool, arguments
 * that are not valid JSON or do not fit the tool's schema) is returned as a rejection: the
 * agent records a correction and asks again. A request that fails (HTTP error after the
 * retries, timeout) throws PlannerError('planner_error'); the SDK error is kept only as
 * `cause`, for logs.
 */
export function createModelPlanner(options: ModelPlannerOptions): Planner {
  const provider = createOpenAICompatible({ name: 'operator-model', baseURL: options.baseUrl, apiKey: options.apiKey });
  const model = provider.chatModel(options.model);
  const screenshots = options.screenshots ?? false;
  const messageBudget = Math.floor(
    ((options.contextTokens ?? 24_000) -
      estimateTokens(MODEL_SYSTEM_PROMPT) -
      TOOLS_AND_FRAMING_TOKENS -
      (screenshots ? SCREENSHOT_TOKENS : 0)) *
      (1 - JSON_ESCAPING_SHARE),
  );

  return {
    wantsScreenshots: screenshots,
    observesElements: true,
    maxCorrections: options.maxCorrections ?? 3,
    async next({ prompt, observation, history, signal, outputSchema, confirmBefore, context, vaultEntries }: PlannerInput): Promise<PlannerDecision | PlannerRejection> {
      const rules = { outputSchema, confirmBefore, context, vaultEntries: vaultEntries ?? [] };
      const text = renderPlannerMessage(withTaskRules(prompt, rules), history, observation, messageBudget);
      const messages: ModelMessage[] = [
        {
          role: 'user',
          content:
            screenshots && observation.screenshot !== undefined
              ? [
                  { type: 'text', text },
                  { type: 'image', image: observation.screenshot, mediaType: 'image/jpeg' },
                ]
              : text,
        },
      ];

      const metered = meteredModel(model);
      let result;
      try {
        result = await generateText({
          model: metered.model,
          system: MODEL_SYSTEM_PROMPT,
          messages,
          tools: toolsFor(outputSchema),
          toolChoice: 'required',
          maxRetries: options.maxRetries ?? 2,
          timeout: options.requestTimeoutMs ?? 60_000,
          abortSignal: signal,
        });
      } catch (error) {
        // The SDK enforces toolChoice 'required' by throwing; for us it is a reply to correct.
        if (ToolChoiceViolationError.isInstance(error)) return { rejected: 'no_tool_call', ...metered.usage() };
        throw new PlannerError('planner_error', 'the model request failed', { cause: error });
      }

      const { usage } = metered.usage();
      const [call, ...extra] = result.toolCalls;
      if (call === undefined) return { rejected: 'no_tool_call', usage };
      if (extra.length > 0) return { rejected: 'several_tool_calls', usage };
      // Unknown tools and unparsable or schema-violating arguments come back as dynamic calls.
      if (call.dynamic === true) {
        return { rejected: NoSuchToolError.isInstance(call.error) ? 'unknown_tool' : 'invalid_arguments', usage };
      }
      const action = toAction(call);
      if (action === null) return { rejected: 'invalid_arguments', usage };
      return { action, note: call.input.reason ?? null, usage };
    },
  };
}

/**
 * The model, wrapped to keep the usage of the response it gets: generateText reports usage
 * only when it returns, and a reply that breaks toolChoice 'required' makes it throw.
 * `usage()` is empty when no response arrived (the request failed). Endpoints that leave
 * out token counts count as 0 tokens.
 */
type ChatModel = ReturnType<ReturnType<typeof createOpenAICompatible>['chatModel']>;

function meteredModel(model: ChatModel): { model: ChatModel; usage(): { usage?: ModelCallUsage } } {
  let usage: ModelCallUsage | undefined;
  const wrapped = wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: 'v3',
      wrapGenerate: async ({ doGenerate }) => {
        const generated = await doGenerate();
        usage = { inputTokens: generated.usage.inputTokens.total ?? 0, outputTokens: generated.usage.outputTokens.total ?? 0 };
        return generated;
      },
    },
  });
  return { model: wrapped, usage: () => (usage === undefined ? {} : { usage }) };
}

/** The action a tool call asks for; null when its arguments fit the schema but not the action. */
function toAction(call: StaticToolCall<typeof PLANNER_TOOLS>): AgentAction | null {
  switch (call.toolName) {
    case 'navigate': {
      const url = normalizeUrl(call.input.url);
      return url === null ? null : { kind: 'navigate', url };
    }
    case 'click':
      return { kind: 'click', target: toTarget(call.input.target) };
    case 'download':
      return { kind: 'download', target: toTarget(call.input.target) };
    case 'type':
      return { kind: 'type', text: call.input.text, into: toTarget(call.input.target) };
    case 'press':
      return { kind: 'press', key: call.input.key };
    case 'scroll':
      return { kind: 'scroll', direction: call.input.direction };
    case 'wait_for_text':
      return { kind: 'wait', text: call.input.text };
    case 'extract_title':
      return { kind: 'extract', source: { of: 'title' } };
    case 'extract_url':
      return { kind: 'extract', source: { of: 'url' } };
    case 'extract_text':
      return { kind: 'extract', source: { of: 'text', selector: call.input.selector } };
    case 'finish':
      // With an output schema the answer is whatever JSON the model sent; the agent checks it.
      return { kind: 'finish', answer: call.input.answer as JsonValue };
    case 'ask_human':
      return { kind: 'ask_human', question: call.input.question, help: call.input.kind };
    case 'ask_human_choice': {
      const options = [...new Set(call.input.options)];
      return options.length < 2 ? null : { kind: 'ask_human', question: call.input.question, help: 'choice', options, multiple: call.input.multiple };
    }
    case 'ask_human_confirm':
      return { kind: 'ask_human', question: call.input.question, help: 'confirm' };
    case 'ask_human_credentials': {
      const fields = [...new Set(call.input.fields)];
      return { kind: 'ask_human', question: call.input.question, help: 'credentials', fields };
    }
    case 'ask_human_takeover':
      return { kind: 'ask_human', question: call.input.question, help: 'takeover' };
    case 'fill_credential':
      // A type of the placeholder: the agent fills the value, and the step shows only the placeholder.
      return { kind: 'type', text: vaultPlaceholder({ name: call.input.name, field: call.input.field }), into: toTarget(call.input.target) };
  }
}

/**
 * What the task asks of the model beyond its prompt: the output schema its answer must
 * match, the steps it must have a human confirm first (the agent enforces both), the
 * vault's credentials by name and domains (never a value); and while a replay heals, the
 * cache entry it takes over from.
 */
function withTaskRules(
  prompt: string,
  { outputSchema, confirmBefore, context, vaultEntries }: { outputSchema: object | null; confirmBefore: readonly string[] | null; context: string | undefined; vaultEntries: readonly VaultEntry[] },
): string {
  const rules: string[] = [];
  if (context !== undefined) rules.push(context);
  if (vaultEntries.length > 0) {
    const listed = vaultEntries.map((entry) => `${entry.name} (${entry.domains.join(', ')})`).join('; ');
    rules.push(`Credentials you may fill with fill_credential, each only on its domains: ${listed}.`);
  }
  if (outputSchema !== null) rules.push(`Finish with an answer that matches this JSON Schema: ${JSON.stringify(outputSchema)}`);
  if (confirmBefore !== null && confirmBefore.length > 0) {
    rules.push(`Call ask_human_confirm before any step that involves: ${confirmBefore.map((phrase) => JSON.stringify(phrase)).join(', ')}.`);
  }
  return rules.length === 0 ? prompt : `${prompt}\n\n${rules.join('\n')}`;
}

function toTarget(target: number | string): ActionTarget {
  return typeof target === 'number' ? { ref: target } : target;
}
