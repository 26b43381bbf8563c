import type { Browser, Keyboard, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromiumAsTheService, makeTempDir } from '../../test/support/browser-fixtures.js';
import { isKeyName, typeText } from './keyboard-keys.js';

// A field that logs every key event and input it gets, and moves the focus to the next
// field once it holds three characters: what a page sees of each key, in order.
const FORM = `<input id="first"><input id="second"><script>
  window.seen = [];
  for (const field of document.querySelectorAll('input')) {
    for (const type of ['keydown', 'keypress', 'input', 'keyup']) {
      field.addEventListener(type, (event) => seen.push(field.id + ' ' + type + ' ' + (event.key ?? event.data ?? '')));
    }
  }
  first.addEventListener('input', () => { if (first.value.length === 3) second.focus(); });
</script>`;
// Keys of the US layout, Enter, a tab and characters no key types (inserted as text).
const TEXT = 'aB!\n\tx é😀 z';

let temp: Awaited<ReturnType<typeof makeTempDir>>;
let browser: Browser;

beforeAll(async () => {
  temp = await makeTempDir('keyboard-keys-');
  browser = await launchChromiumAsTheService(temp.dir, ['--disable-gpu', '--no-first-run']);
});

afterAll(async () => {
  await browser?.close();
  await temp?.remove();
});

interface Typed {
  first: string;
  second: string;
  seen: string[];
}

async function typedOnFreshPage(type: (page: Page) => Promise<void>): Promise<Typed> {
  const page = await browser.newPage();
  try {
    await page.setContent(FORM);
    await page.focus('#first');
    await type(page);
    return (await page.evaluate('({ first: first.value, second: second.value, seen })')) as Typed;
  } finally {
    await page.close();
  }
}

describe('typeText', () => {
  it('gives the page the same events, in the same order, as puppeteer typing key after key', async () => {
    const reference = await typedOnFreshPage((page) => page.keyboard.type(TEXT));
    const typed = await typedOnFreshPage((page) => typeText(page.keyboard, TEXT));
    expect(typed).toEqual(reference);
    // The page's own focus change after three characters took effect before the fourth.
    expect(typed.first).toBe('aB!');
    expect(typed.second).toContain('é😀 z');
  });

  it('sends every event before the browser has acknowledged any', async () => {
    const calls: string[] = [];
    let acknowledge = (): void => undefined;
    const acknowledged = new Promise<void>((resolve) => (acknowledge = resolve));
    const pending = (call: string) => {
      calls.push(call);
      return acknowledged;
    };
    const keyboard = { down: (key: string) => pending(`down ${key}`), up: (key: string) => pending(`up ${key}`), sendCharacter: (char: string) => pending(`text ${char}`) } as unknown as Keyboard;
    const typing = typeText(keyboard, 'ab😀');
    expect(calls).toEqual(['down a', 'up a', 'down b', 'up b', 'text 😀']);
    acknowledge();
    await typing;
  });

  it('knows the key names of puppeteer’s layout and nothing else', () => {
    expect(isKeyName('Enter')).toBe(true);
    expect(isKeyName('a')).toBe(true);
    expect(isKeyName('é')).toBe(false);
    expect(isKeyName('NotAKey')).toBe(false);
    expect(isKeyName('toString')).toBe(false);
  });
});
