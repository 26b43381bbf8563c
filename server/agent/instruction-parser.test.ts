import { describe, expect, it } from 'vitest';
import { parseInstructions, type Instruction } from './instruction-parser';

function actionsOf(prompt: string): Instruction['action'][] {
  const parsed = parseInstructions(prompt);
  if (!parsed.ok) throw new Error(`expected ${JSON.stringify(prompt)} to parse: ${parsed.problem}`);
  return parsed.instructions.map((instruction) => instruction.action);
}

function rejects(prompt: string): boolean {
  return !parseInstructions(prompt).ok;
}

describe('parseInstructions: each instruction', () => {
  it('reads go to and open, keeping an http URL as written', () => {
    expect(actionsOf('go to http://127.0.0.1:4312/form')).toEqual([
      { kind: 'navigate', url: 'http://127.0.0.1:4312/form' },
    ]);
    expect(actionsOf('open https://example.com/a?b=c#d')).toEqual([
      { kind: 'navigate', url: 'https://example.com/a?b=c#d' },
    ]);
  });

  it('adds https:// to an address without a scheme', () => {
    expect(actionsOf('go to example.com/path')).toEqual([{ kind: 'navigate', url: 'https://example.com/path' }]);
    expect(actionsOf('open localhost:3000')).toEqual([{ kind: 'navigate', url: 'https://localhost:3000/' }]);
  });

  it('accepts a quoted URL, so a URL may contain ;', () => {
    expect(actionsOf('go to "http://x.test/a;b?q=1" then scroll down')).toEqual([
      { kind: 'navigate', url: 'http://x.test/a;b?q=1' },
      { kind: 'scroll', direction: 'down' },
    ]);
    expect(rejects('go to "http://x.test/a b"')).toBe(true);
  });

  it('refuses non-http schemes and things that are not URLs', () => {
    expect(rejects('go to file:///etc/passwd')).toBe(true);
    expect(rejects('open javascript:alert(1)')).toBe(true);
    expect(rejects('go to data:text/html,hi')).toBe(true);
    expect(rejects('go to chrome://settings')).toBe(true);
    expect(rejects('go to mailto:a@b.test')).toBe(true);
    expect(rejects('go to http://')).toBe(true);
    expect(rejects('go to')).toBe(true);
    expect(rejects('go to http://a.test http://b.test')).toBe(true);
  });

  it('reads download with visible text or a CSS selector, and refuses it without a quoted target', () => {
    expect(actionsOf('download "#report"')).toEqual([{ kind: 'download', target: '#report' }]);
    expect(actionsOf('Download "Get the CSV"')).toEqual([{ kind: 'download', target: 'Get the CSV' }]);
    expect(rejects('download #report')).toBe(true);
    expect(rejects('download ""')).toBe(true);
  });

  it('reads click with visible text or a CSS selector', () => {
    expect(actionsOf('click "Sign in"')).toEqual([{ kind: 'click', target: 'Sign in' }]);
    expect(actionsOf('click "form > button[type=submit]"')).toEqual([
      { kind: 'click', target: 'form > button[type=submit]' },
    ]);
  });

  it('reads type ... into ...', () => {
    expect(actionsOf('type "ada@example.com" into "Email"')).toEqual([
      { kind: 'type', text: 'ada@example.com', into: 'Email' },
    ]);
  });

  it('reads press with key names and chords', () => {
    expect(actionsOf('press Enter; press Tab; press Control+A; press F5')).toEqual([
      { kind: 'press', key: 'Enter' },
      { kind: 'press', key: 'Tab' },
      { kind: 'press', key: 'Control+A' },
      { kind: 'press', key: 'F5' },
    ]);
    expect(rejects('press')).toBe(true);
    expect(rejects('press Enter Tab')).toBe(true);
    expect(rejects('press "Enter"')).toBe(true);
    expect(rejects('press <Enter>')).toBe(true);
  });

  it('reads wait for, scroll and ask a human', () => {
    expect(actionsOf('wait for "Thank you"; scroll down; scroll up; ask a human "Which plan?"')).toEqual([
      { kind: 'wait', text: 'Thank you' },
      { kind: 'scroll', direction: 'down' },
      { kind: 'scroll', direction: 'up' },
      { kind: 'ask_human', question: 'Which plan?', help: 'question' },
    ]);
    expect(rejects('scroll left')).toBe(true);
    expect(rejects('scroll')).toBe(true);
  });

  it('reads the three return forms', () => {
    expect(actionsOf('return the title; return the url; return the text of "#result"')).toEqual([
      { kind: 'extract', source: { of: 'title' } },
      { kind: 'extract', source: { of: 'url' } },
      { kind: 'extract', source: { of: 'text', selector: '#result' } },
    ]);
    expect(rejects('return the body')).toBe(true);
    expect(rejects('return title')).toBe(true);
    expect(rejects('return the text of #result')).toBe(true);
  });
});

describe('parseInstructions: sentences', () => {
  it('splits on then, ; and line breaks, in any mix', () => {
    const prompt = 'go to http://a.test then click "One"; click "Two"\nclick "Three"\r\nclick "Four"';
    expect(actionsOf(prompt).map((action) => action.kind)).toEqual(['navigate', 'click', 'click', 'click', 'click']);
  });

  it('matches keywords in any case', () => {
    expect(actionsOf('GO TO http://a.test THEN Click "x" Then PRESS Enter; Return The URL; Ask A Human "q"')).toEqual([
      { kind: 'navigate', url: 'http://a.test/' },
      { kind: 'click', target: 'x' },
      { kind: 'press', key: 'Enter' },
      { kind: 'extract', source: { of: 'url' } },
      { kind: 'ask_human', question: 'q', help: 'question' },
    ]);
  });

  it('keeps then, ; and line breaks inside quotes', () => {
    expect(actionsOf('type "first; then\nsecond" into "Notes" then click "Save then close"')).toEqual([
      { kind: 'type', text: 'first; then\nsecond', into: 'Notes' },
      { kind: 'click', target: 'Save then close' },
    ]);
  });

  it('only treats then as a separator when it stands alone', () => {
    expect(actionsOf('go to http://a.test/thenceforth')).toEqual([
      { kind: 'navigate', url: 'http://a.test/thenceforth' },
    ]);
  });

  it('ignores empty sentences and surrounding space', () => {
    expect(actionsOf('  ;; then go to http://a.test ;\n\n then then scroll down ;  ')).toEqual([
      { kind: 'navigate', url: 'http://a.test/' },
      { kind: 'scroll', direction: 'down' },
    ]);
  });

  it('allows a sentence to end with a period', () => {
    expect(actionsOf('go to http://a.test/x. Then press Enter. Then click "Go".')).toEqual([
      { kind: 'navigate', url: 'http://a.test/x' },
      { kind: 'press', key: 'Enter' },
      { kind: 'click', target: 'Go' },
    ]);
  });

  it('unescapes \\" and \\\\ inside double quotes and accepts typographic quotes', () => {
    expect(actionsOf('click "say \\"hi\\" \\\\ bye"; click “Sign in”; click "a\\:b"')).toEqual([
      { kind: 'click', target: 'say "hi" \\ bye' },
      { kind: 'click', target: 'Sign in' },
      { kind: 'click', target: 'a\\:b' },
    ]);
  });

  it('keeps each sentence as written for the step note', () => {
    const parsed = parseInstructions('Go to http://a.test then click "Save; now"');
    expect(parsed.ok && parsed.instructions.map((instruction) => instruction.source)).toEqual([
      'Go to http://a.test',
      'click "Save; now"',
    ]);
  });
});

describe('parseInstructions: anything else is unsupported', () => {
  it.each([
    [''],
    ['   \n ; then '],
    ['find the cheapest flight to Lisbon'],
    ['click Sign in'],
    ['click ""'],
    ['click "a" "b"'],
    ['type "x"'],
    ['type "x" in "Email"'],
    ['type "" into "Email"'],
    ['wait "x"'],
    ['wait for x'],
    ['ask a human'],
    ['ask human "q"'],
    ['click "unterminated'],
    ['click “unterminated'],
    ['go to http://a.test and click "x"'],
  ])('%j', (prompt) => {
    expect(rejects(prompt)).toBe(true);
  });

  it('rejects the whole prompt when one sentence is bad, naming which', () => {
    expect(parseInstructions('go to http://a.test then dance then click "x"')).toEqual({
      ok: false,
      problem: 'sentence 2 is not an instruction',
    });
  });
});
