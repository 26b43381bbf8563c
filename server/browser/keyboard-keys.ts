import type { Keyboard, KeyInput } from 'puppeteer-core';
import { _keyDefinitions } from 'puppeteer-core/internal/common/USKeyboardLayout.js';

/**
 * Whether puppeteer's keyboard knows the key: its own key table, which the package exports
 * under `internal/`, decides, so an unknown name is refused before anything is sent.
 */
export function isKeyName(key: string): key is KeyInput {
  return Object.hasOwn(_keyDefinitions, key);
}

/**
 * Types `text` as puppeteer's `keyboard.type()` does (a key press for each character its
 * layout has a key for, the others inserted as text), but sends every event at once
 * instead of each after the browser acknowledged the one before. One DevTools session and
 * the renderer's one input queue deliver them in the same order, each handled before the
 * next as before; only the round trips between them go, and those are long while a
 * screencast runs (about 7 ms a key against 3 without: a 14-character address took
 * 100 ms to type).
 */
export async function typeText(keyboard: Keyboard, text: string): Promise<void> {
  const sent: Array<Promise<void>> = [];
  // Each call sends its event before it returns (puppeteer sends before its first await).
  for (const char of text) {
    if (isKeyName(char)) sent.push(keyboard.down(char), keyboard.up(char));
    else sent.push(keyboard.sendCharacter(char));
  }
  await Promise.all(sent);
}
