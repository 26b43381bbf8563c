import { describe, expect, it } from 'vitest';
import { renderPlannerMessage } from './model-prompt';
import type { NewStep } from './step';
import { estimateTokens } from './token-estimate';

const page = {
  url: 'http://a.test/',
  title: 'A',
  elements: [{ ref: 1, role: 'link', name: 'Say "hi"', tag: 'a' }],
};
const BUDGET = 20_000;

function scrolls(count: number, note: string | null = null): NewStep[] {
  return Array.from({ length: count }, (_, index) => ({ type: 'action', action: `scroll down ${index + 1}`, url: null, title: null, note }));
}

describe('renderPlannerMessage', () => {
  it('shows the task, numbered steps and the page with element refs', () => {
    const history: NewStep[] = [
      { type: 'action', action: 'navigate http://a.test/', url: 'http://a.test/', title: 'A', note: 'start' },
      { type: 'message', action: 'ask_human', url: null, title: null, note: 'Which one?' },
    ];
    expect(renderPlannerMessage('Open A', history, page, BUDGET)).toBe(
      [
        'Task: Open A',
        '',
        'Steps so far:',
        '1. action: navigate http://a.test/: (start)',
        '2. message: ask_human: (Which one?)',
        '',
        'Current page:',
        'URL: http://a.test/',
        'Title: A',
        'Interactive elements ([ref] role "name"):',
        '[1] link "Say \\"hi\\""',
      ].join('\n'),
    );
  });

  it('ends with the correction when the last step is one', () => {
    const history: NewStep[] = [{ type: 'correction', action: 'correction no_tool_call', url: null, title: null, note: 'Call a tool.' }];
    expect(renderPlannerMessage('Open A', history, page, BUDGET).endsWith('\n\nCorrection: Call a tool.')).toBe(true);
  });

  it('cuts older steps to one short line and keeps the newest whole', () => {
    const text = renderPlannerMessage('Scroll', scrolls(8, 'x'.repeat(500)), { ...page, elements: [] }, BUDGET);
    const lines = text.split('\n');
    expect(lines.find((line) => line.startsWith('1. '))).toHaveLength(160);
    expect(lines.find((line) => line.startsWith('8. '))!.length).toBeGreaterThan(500);
  });

  it('leaves out the oldest steps of a history over the budget, saying how many', () => {
    const text = renderPlannerMessage('Scroll', scrolls(400, 'y'.repeat(200)), { ...page, elements: [] }, 5_000);
    expect(estimateTokens(text)).toBeLessThanOrEqual(5_000);
    const omitted = /\((\d+) earlier steps not shown\)\n(\d+)\. action/.exec(text);
    expect(omitted).not.toBeNull();
    expect(Number(omitted![2])).toBe(Number(omitted![1]) + 1);
    expect(text).toContain('400. action: scroll down 400');
    expect(text).toContain('Interactive elements ([ref] role "name"):\n(none)');
  });

  it('caps page text, and leaves out the last elements only when the page alone would not fit', () => {
    const elements = Array.from({ length: 150 }, (_, index) => ({ ref: index + 1, role: 'link', name: `${index} ${'z'.repeat(300)}`, tag: 'a' }));
    const roomy = renderPlannerMessage('Read', [], { ...page, elements }, BUDGET);
    expect(roomy).toContain('[150] link');
    expect(roomy).not.toContain('z'.repeat(100));
    const tight = renderPlannerMessage('Read', [], { ...page, title: 't'.repeat(1_000), elements }, 4_000);
    expect(estimateTokens(tight)).toBeLessThanOrEqual(4_000);
    expect(tight).toMatch(/\(\d+ more elements not shown\)/);
    expect(tight).toContain('[1] link');
  });
});
