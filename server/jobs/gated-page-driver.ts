import type { EffectGate, PageDriver } from '../browser';

/**
 * The driver of a task's page with two checks before every method that changes or waits
 * on the page. `mayAct`, first: the task runner's check that the run may still act (its
 * lease surely holds, it is not being handed over); it throws to refuse. `effect`, the
 * action's gate, once that passed: the pictures of the steps before it end where it
 * passes (told what the action does to the page: a wait only watches, and passes at once;
 * typing paints its last key, on a loaded host after its end); the action finds its target
 * meanwhile.
 * Reading the page (observe, text, screenshots) is not gated: it changes nothing another
 * driver could conflict with.
 */
export function gatedPageDriver(driver: PageDriver, mayAct: () => Promise<void>, effect: EffectGate): PageDriver {
  return {
    observe: (options) => driver.observe(options),
    painted: () => driver.painted(),
    navigatedAt: () => driver.navigatedAt(),
    textOf: (selector) => driver.textOf(selector),
    textsOf: (selector) => driver.textsOf(selector),
    screenshot: () => driver.screenshot(),
    setAllowedDomains: (domains) => driver.setAllowedDomains(domains),
    fingerprint: (target, purpose) => driver.fingerprint(target, purpose),
    locate: (fingerprint) => driver.locate(fingerprint),
    navigate: async (url) => {
      await mayAct();
      return driver.navigate(url, effect);
    },
    click: async (target) => {
      await mayAct();
      return driver.click(target, effect);
    },
    type: async (text, into, options) => {
      await mayAct();
      return driver.type(text, into, options, effect);
    },
    press: async (key) => {
      await mayAct();
      return driver.press(key, effect);
    },
    scroll: async (direction) => {
      await mayAct();
      return driver.scroll(direction, effect);
    },
    waitForText: async (text, timeoutMs) => {
      await mayAct();
      return driver.waitForText(text, timeoutMs, effect);
    },
    download: async (target, limits) => {
      await mayAct();
      return driver.download(target, limits, effect);
    },
  };
}
