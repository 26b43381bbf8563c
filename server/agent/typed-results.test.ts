import { describe, expect, it } from 'vitest';
import { FakePageDriver } from '../../test/support/fake-page-driver';
import { confirmationNeeded } from './confirm-before';
import { parseInstructions } from './instruction-parser';
import { parseJsonReturn } from './json-return';
import { createOfflinePlanner } from './offline-planner';
import { compileOutputSchema, OUTPUT_SCHEMA_MAX_BYTES } from './output-schema';
import { numberIn } from './page-values';
import { runAgent, type RunAgentInput } from './run-agent';
import type { NewStep } from './step';

// Structured results and typed asks in the agent: the offline language's new sentences,
// the output schema check, confirm_before and credentials typed from memory.

const SHOP = 'http://127.0.0.1:4000/shop';

function shop(): FakePageDriver {
  return new FakePageDriver({
    [SHOP]: {
      title: 'Shop',
      elements: [
        { ref: 1, role: 'button', name: 'Buy now', tag: 'button' },
        { ref: 2, role: 'textbox', name: 'Code', tag: 'input' },
      ],
      texts: { h1: 'Blue kettle', '.price': 'Total: $1,234.50', li: 'one\ntwo' },
    },
  });
}

function input(prompt: string, extra: Partial<RunAgentInput['task']> = {}, rest: Partial<RunAgentInput> = {}): { input: RunAgentInput; steps: NewStep[]; driver: FakePageDriver } {
  const steps: NewStep[] = [];
  const driver = shop();
  return {
    steps,
    driver,
    input: {
      task: { id: 'task_1', prompt, maxSteps: null, allowedDomains: null, output: null, confirmBefore: null, ...extra },
      driver,
      planner: createOfflinePlanner(),
      history: [],
      recordStep: async (step) => {
        steps.push(step);
      },
      recordModelCall: async () => undefined,
      signal: new AbortController().signal,
      deadline: Date.now() + 60_000,
      ...rest,
    },
  };
}

function schema(value: object) {
  const compiled = compileOutputSchema(value);
  if (!compiled.ok) throw new Error(compiled.problem);
  return { schema: value, validate: compiled.validate };
}

describe('offline language additions', () => {
  it('parses return json with every extraction, and refuses malformed objects', () => {
    expect(parseJsonReturn('return json {"t": the title, "u": the url, "h": the text of "h1", "all": the texts of "li", "n": the number in ".price"}')).toEqual([
      { key: 't', source: { of: 'title' } },
      { key: 'u', source: { of: 'url' } },
      { key: 'h', source: { of: 'text', selector: 'h1' } },
      { key: 'all', source: { of: 'texts', selector: 'li' } },
      { key: 'n', source: { of: 'number', selector: '.price' } },
    ]);
    for (const bad of ['return json {}', 'return json {"a": the title', 'return json {"a": the title, "a": the url}', 'return json {a: the title}', 'return json {"a": the colour}', 'return json {"a": the title} extra']) {
      expect(parseJsonReturn(bad), bad).toBeNull();
    }
    expect(parseInstructions('return json {"a": the title, "b": the text of "h1"}')).toMatchObject({ ok: true });
  });

  it('parses the typed asks', () => {
    const actions = (prompt: string) => {
      const parsed = parseInstructions(prompt);
      return parsed.ok ? parsed.instructions.map((instruction) => instruction.action) : parsed.problem;
    };
    expect(actions('ask a human to choose between "Red" and "Blue"')).toEqual([
      { kind: 'ask_human', question: 'Choose one: "Red", "Blue"', help: 'choice', options: ['Red', 'Blue'], multiple: false },
    ]);
    expect(actions('ask a human to choose between "A", "B" or "C"')).toMatchObject([{ options: ['A', 'B', 'C'] }]);
    expect(actions('ask a human to confirm "Buy the kettle?"')).toEqual([{ kind: 'ask_human', question: 'Buy the kettle?', help: 'confirm' }]);
    expect(actions('ask a human for "otp" and "pin"')).toEqual([{ kind: 'ask_human', question: 'Provide otp, pin', help: 'credentials', fields: ['otp', 'pin'] }]);
    expect(actions('ask a human to take over "Solve the puzzle"')).toEqual([{ kind: 'ask_human', question: 'Solve the puzzle', help: 'takeover' }]);
    for (const bad of ['ask a human to choose between "A"', 'ask a human to choose between "A" and "A"', 'ask a human for "not a name"', 'ask a human for "a" "b"']) {
      expect(typeof actions(bad), bad).toBe('string');
    }
  });

  it('reads the number in a text', () => {
    expect(numberIn('Total: $1,234.50')).toBe(1234.5);
    expect(numberIn('−3 degrees')).toBe(-3);
    expect(numberIn('none')).toBeNull();
  });
});

describe('output_schema', () => {
  it('takes the supported subset and refuses other keywords, remote refs, bad types and over 16 KiB', () => {
    expect(compileOutputSchema({ type: 'object', properties: { a: { type: ['string', 'null'] }, b: { type: 'integer', nullable: true }, c: { enum: ['x'] } }, required: ['a'] }).ok).toBe(true);
    for (const bad of [
      { type: 'object', $ref: 'https://example.com/schema.json' },
      { type: 'string', pattern: '(a+)+$' },
      { type: 'string', format: 'email' },
      { type: 'date' },
      { type: 'object', properties: { a: { type: 'string', minimum: 'x' } } },
      { $schema: 'http://json-schema.org/draft-07/schema#', type: 'string' },
      { type: 'object', description: 'x'.repeat(OUTPUT_SCHEMA_MAX_BYTES) },
    ]) {
      expect(compileOutputSchema(bad).ok, JSON.stringify(bad).slice(0, 80)).toBe(false);
    }
  });

  it('succeeds with a return json that matches, and fails output_invalid with one that does not', async () => {
    const prompt = `go to ${SHOP} then return json {"name": the text of "h1", "price": the number in ".price", "all": the texts of "li"}`;
    const good = input(prompt, {
      output: schema({ type: 'object', properties: { name: { type: 'string' }, price: { type: 'number' }, all: { type: 'array', items: { type: 'string' } } }, required: ['name', 'price', 'all'] }),
    });
    expect(await runAgent(good.input)).toEqual({ status: 'succeeded', result: { name: 'Blue kettle', price: 1234.5, all: ['one', 'two'] } });

    const bad = input(prompt, { output: schema({ type: 'object', properties: { price: { type: 'string' } } }) });
    expect(await runAgent(bad.input)).toEqual({ status: 'failed', error: 'output_invalid' });
    expect(bad.steps.at(-1)).toMatchObject({ type: 'message', action: 'failed output_invalid' });
  });
});

describe('confirm_before and credentials', () => {
  it('stops for a confirm before a matching click, and goes on once the human said yes', async () => {
    const prompt = `go to ${SHOP} then click "Buy now"`;
    const first = input(prompt, { confirmBefore: ['buy'] });
    expect(await runAgent(first.input)).toEqual({ status: 'needs_human', question: 'Confirm before the agent continues: click "Buy now"', help: 'confirm' });
    expect(first.driver.methods).not.toContain('click');
    const history = [...first.steps, { type: 'message' as const, action: 'human_answer', url: null, title: null, note: 'Confirmed: yes' }];
    const second = input(prompt, { confirmBefore: ['buy'] }, { history });
    expect(await runAgent(second.input)).toMatchObject({ status: 'succeeded' });
    expect(second.driver.methods).toContain('click');
  });

  it('matches element refs by their name, and leaves other steps alone', () => {
    const page = { url: SHOP, title: 'Shop', elements: [{ ref: 1, role: 'button', name: 'Buy now', tag: 'button' }] };
    expect(confirmationNeeded(['buy'], { kind: 'click', target: { ref: 1 } }, page, [], 'click ref=1')).toBe(true);
    expect(confirmationNeeded(['buy'], { kind: 'scroll', direction: 'down' }, page, [], 'scroll down')).toBe(false);
    expect(confirmationNeeded(null, { kind: 'click', target: 'Buy now' }, page, [], 'click')).toBe(false);
  });

  it('types a credential from memory, masked, once, and records only the placeholder', async () => {
    const credentials = new Map([['otp', '493817']]);
    const run = input(`go to ${SHOP} then type "{{otp}}" into "Code" then type "{{otp}}" into "Code"`, {}, { credentials });
    expect(await runAgent(run.input)).toMatchObject({ status: 'succeeded' });
    const typed = run.driver.calls.filter((call) => call.method === 'type').map((call) => call.args);
    expect(typed).toEqual([
      ['493817', 'Code', { secret: true }],
      ['{{otp}}', 'Code'],
    ]);
    expect(credentials.size).toBe(0);
    expect(JSON.stringify(run.steps)).not.toContain('493817');
  });

  it('masks a typed credential the page shows back, in steps and in the result', async () => {
    const driver = new FakePageDriver({ [SHOP]: { title: 'Shop', texts: { '#echo': 'Your code 493817 was sent' } } });
    const run = input(`go to ${SHOP} then type "{{otp}}" into "Code" then return the text of "#echo"`, {}, { credentials: new Map([['otp', '493817']]), driver });
    expect(await runAgent(run.input)).toEqual({ status: 'succeeded', result: 'Your code ******** was sent' });
    expect(JSON.stringify(run.steps)).not.toContain('493817');
  });
});
