import type { PageEffect } from '../artifacts/step-screenshots';
import type { PageDriver } from '../browser';

/**
 * The driver of a task's page with a gate before every method that changes or waits on
 * the page: the task runner's check that the run may still act (its lease surely holds,
 * it is not being handed over). The gate throws to refuse; it is told what the action
 * does to the page (a wait only watches it; typing paints its last key, on a loaded host
 * after its end). Reading the page (observe, text, screenshots) is not gated: it changes
 * nothing another driver could conflict with.
 */
export function gatedPageDriver(driver: PageDriver, gate: (effect: PageEffect) => Promise<void>): PageDriver {
  return {
    observe: (options) => driver.observe(options),
    textOf: (selector) => driver.textOf(selector),
    textsOf: (selector) => driver.textsOf(selector),
    screenshot: () => driver.screenshot(),
    setAllowedDomains: (domains) => driver.setAllowedDomains(domains),
    fingerprint: (target, purpose) => driver.fingerprint(target, purpose),
    locate: (fingerprint) => driver.locate(fingerprint),
    navigate: async (url) => {
      await gate('changes');
      return driver.navigate(url);
    },
    click: async (target) => {
      await gate('changes');
      return driver.click(target);
    },
    type: async (text, into, options) => {
      await gate('types');
      return driver.type(text, into, options);
    },
    press: async (key) => {
      await gate('changes');
      return driver.press(key);
    },
    scroll: async (direction) => {
      await gate('changes');
      return driver.scroll(direction);
    },
    waitForText: async (text, timeoutMs) => {
      await gate('watches');
      return driver.waitForText(text, timeoutMs);
    },
    download: async (target, limits) => {
      await gate('changes');
      return driver.download(target, limits);
    },
  };
}
