import { describe, expect, it } from 'vitest';
import { MAX_HISTORY_STEPS, renderPlannerMessage } from './model-prompt';
import type { NewStep } from './step';

const page = {
  url: 'http://a.test/',
  title: 'A',
  elements: [{ ref: 1, role: 'link', name: 'Say "hi"', tag: 'a' }],
};

describe('renderPlannerMessage', () => {
  it('shows the task, numbered steps and the page with element refs', () => {
    const history: NewStep[] = [
      { type: 'action', action: 'navigate http://a.test/', url: 'http://a.test/', title: 'A', note: 'start' },
      { type: 'message', action: 'ask_human', url: null, title: null, note: 'Which one?' },
    ];
    expect(renderPlannerMessage('Open A', history, page)).toBe(
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

  it('keeps only the latest steps of a long history, saying how many were left out', () => {
    const history: NewStep[] = Array.from({ length: MAX_HISTORY_STEPS + 5 }, (_, index) => ({
      type: 'action',
      action: `scroll down ${index + 1}`,
      url: null,
      title: null,
      note: null,
    }));
    const text = renderPlannerMessage('Scroll', history, { ...page, elements: [] });
    expect(text).toContain('(5 earlier steps not shown)\n6. action: scroll down 6');
    expect(text).not.toContain('scroll down 5\n');
    expect(text).toContain(`${MAX_HISTORY_STEPS + 5}. action: scroll down ${MAX_HISTORY_STEPS + 5}`);
    expect(text).toContain('Interactive elements ([ref] role "name"):\n(none)');
  });
});
