import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LocalBrowserProvider } from './local-provider.js';
import { BROWSER_ISOLATION, CHROMIUM_PATH, makeTempDir, startPageServer, type PageServer } from '../../test/support/browser-fixtures.js';
import { ActionError, type BrowserHandle, type PageDriver, type PageEffect } from './types.js';

// One Chromium serves every driver test; each test starts from a fresh navigation.
let server: PageServer;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let handle: BrowserHandle;
let driver: PageDriver;

beforeAll(async () => {
  server = await startPageServer();
  temp = await makeTempDir('page-driver-');
  const provider = new LocalBrowserProvider({ chromiumPath: CHROMIUM_PATH, dataDir: temp.dir, ...BROWSER_ISOLATION, egress: null });
  handle = await provider.launch({ deviceId: 'driver-device', orgId: 'org-1' });
  driver = await handle.page();
});

afterAll(async () => {
  await handle?.close();
  await server?.close();
  await temp?.remove();
});

beforeEach(async () => {
  await driver.setAllowedDomains(null);
});

async function expectActionError(promise: Promise<unknown>, code: ActionError['code']): Promise<ActionError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ActionError);
  expect((error as ActionError).code).toBe(code);
  return error as ActionError;
}

describe('observe', () => {
  it('lists interactive elements with refs, names, roles and values, never passwords', async () => {
    await driver.navigate(server.url('/form'));
    const observation = await driver.observe();
    expect(observation.url).toBe(server.url('/form'));
    expect(observation.title).toBe('Form page');
    const byName = new Map(observation.elements.map((element) => [element.name, element]));
    expect(byName.get('Next page')).toMatchObject({ role: 'link', tag: 'a' });
    expect(byName.get('Say hello')).toMatchObject({ role: 'button', tag: 'button' });
    expect(byName.get('Email address')).toMatchObject({ role: 'textbox', tag: 'input', value: '' });
    expect(byName.get('Full name')).toMatchObject({ role: 'textbox' });
    expect(byName.get('Your city')).toMatchObject({ role: 'textbox' });
    expect(byName.get('Country')).toMatchObject({ role: 'combobox', value: 'Choose' });
    expect(byName.get('Plain div action')).toMatchObject({ role: 'clickable' });
    const password = observation.elements.find((element) => element.name === 'secret');
    expect(password).toBeDefined();
    expect(password?.value).toBeUndefined();
    expect(JSON.stringify(observation)).not.toContain('hunter2');
    expect(observation.elements.map((element) => element.ref)).toEqual(
      observation.elements.map((_element, index) => index + 1),
    );
    expect(observation.screenshot).toBeUndefined();
  });

  it('reads only the URL and title when the elements are not wanted, and forgets earlier refs', async () => {
    await driver.navigate(server.url('/form'));
    const { elements } = await driver.observe();
    const hello = elements.find((element) => element.name === 'Say hello');
    expect(hello).toBeDefined();
    expect(await driver.observe({ elements: false })).toEqual({ url: server.url('/form'), title: 'Form page', elements: [] });
    await expectActionError(driver.click({ ref: hello!.ref }), 'target_not_found');
  });

  it('returns a JPEG screenshot on request', async () => {
    await driver.navigate(server.url('/next'));
    const { screenshot } = await driver.observe({ screenshot: true });
    expect(Buffer.from(screenshot ?? '', 'base64').subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
  });
});

describe('click', () => {
  beforeEach(async () => {
    await driver.navigate(server.url('/form'));
  });

  it('clicks by exact visible text', async () => {
    await driver.click('Say hello');
    expect(await driver.textOf('#out')).toBe('Hello clicked');
  });

  it('clicks by case-insensitive partial text, including non-interactive elements', async () => {
    await driver.click('another');
    expect(await driver.textOf('#out')).toBe('Other clicked');
    await driver.click('plain div action');
    expect(await driver.textOf('#out')).toBe('Div clicked');
  });

  it('clicks by CSS selector', async () => {
    await driver.click('button.secondary');
    expect(await driver.textOf('#out')).toBe('Other clicked');
  });

  it('clicks by ref from the last observation', async () => {
    const { elements } = await driver.observe();
    const hello = elements.find((element) => element.name === 'Say hello');
    await driver.click({ ref: hello?.ref ?? -1 });
    expect(await driver.textOf('#out')).toBe('Hello clicked');
  });

  it('waits for a navigation the click starts, and says when the page navigated', async () => {
    const clickedAt = Date.now();
    await driver.click('Next page');
    expect(driver.navigatedAt()).toBeGreaterThanOrEqual(clickedAt);
    const observation = await driver.observe();
    expect(observation.url).toBe(server.url('/next'));
    expect(await driver.textOf('#where')).toBe('Second page');
  });

  it('waits for a navigation a script starts on click, and follows a link within the document', async () => {
    await driver.navigate(server.url('/script-navigation'));
    await driver.click('Details');
    expect((await driver.observe()).url).toBe(server.url('/script-navigation#details'));
    await driver.click('Continue');
    expect((await driver.observe()).url).toBe(server.url('/next'));
    expect(await driver.textOf('#where')).toBe('Second page');
  });

  it('does not wait for a navigation a click did not ask for', async () => {
    // Every click used to wait 300 ms for a navigation to show up; the page now tells at once.
    const navigatedAt = driver.navigatedAt();
    const started = performance.now();
    for (let click = 0; click < 5; click += 1) await driver.click('Say hello');
    expect(performance.now() - started).toBeLessThan(5 * 300);
    expect(await driver.textOf('#out')).toBe('Hello clicked');
    // A click that changes the page in place is no navigation.
    expect(driver.navigatedAt()).toBe(navigatedAt);
  });

  it('reports target_not_found for unknown text and stale refs', async () => {
    await expectActionError(driver.click('No such button anywhere'), 'target_not_found');
    await expectActionError(driver.click({ ref: 9999 }), 'target_not_found');
  });

  it('clicks an element that moved between its point and the press, and nothing that took its place', async () => {
    await driver.navigate(server.url('/moving-target'));
    await driver.click('Order now');
    expect(await driver.textOf('#out')).toBe('Ordered');
    // The banner that slid under the first press never saw it; the button saw one click.
    expect((await driver.textOf('#presses')).trim()).toBe('target:mousedown target:click');
  });

  it('lets a press that started on its element end wherever the page put the pointer', async () => {
    await driver.navigate(server.url('/press-menu'));
    await driver.click('Choose size');
    expect(await driver.textOf('#out')).toBe('Large chosen');
  });

  it('answers the JavaScript dialogs a click opens, yes, and goes on', async () => {
    await driver.navigate(server.url('/dialogs'));
    await driver.click('Alert');
    expect(await driver.textOf('#out')).toBe('alerted');
    await driver.click('Confirm');
    expect(await driver.textOf('#out')).toBe('confirmed');
    await driver.click('Prompt');
    expect(await driver.textOf('#out')).toBe('named Ada');
  });

  it('clicks a covered element through the DOM, never pressing what covers it', async () => {
    await driver.navigate(server.url('/covered-target'));
    await driver.click('Order now');
    expect(await driver.textOf('#out')).toBe('Ordered');
    expect(await driver.textOf('#presses')).toBe('');
  });

  it('presses an element in view where it is, and scrolls one out of view, in a scroller too, to the middle first', async () => {
    await driver.navigate(server.url('/out-of-view'));
    await driver.click('#near');
    await driver.click('#inner');
    await driver.click('#far');
    const presses = (await driver.textOf('#presses')).trim().split(' ');
    expect(presses).toHaveLength(3);
    const [near, inner, far] = presses.map((press) => press.split(':'));
    // In view already: nothing scrolled.
    expect(near).toEqual(['near', '0', '0']);
    // Within the viewport's bounds, but below its scroller's: the scroller scrolled to it.
    expect(inner![0]).toBe('inner');
    expect(Number(inner![2])).toBeGreaterThan(0);
    // Below the page's fold: the page scrolled to it, and pressed with the mouse (a trusted press).
    expect(far![0]).toBe('far');
    expect(Number(far![1])).toBeGreaterThan(2_000);
  });
});

describe('type', () => {
  beforeEach(async () => {
    await driver.navigate(server.url('/form'));
  });

  async function valueOf(selector: string): Promise<string | undefined> {
    const { elements } = await driver.observe();
    const name = { '#email': 'Email address', fullname: 'Full name', city: 'Your city', zip: 'Postal code' }[selector];
    return elements.find((element) => element.name === name)?.value;
  }

  it('types into a field by label (for= and nesting), placeholder, aria-label and name', async () => {
    await driver.type('a@example.com', 'Email address');
    await driver.type('Ada Lovelace', 'full name');
    await driver.type('Paris', 'Your city');
    await driver.type('75001', 'Postal code');
    expect(await valueOf('#email')).toBe('a@example.com');
    expect(await valueOf('fullname')).toBe('Ada Lovelace');
    expect(await valueOf('city')).toBe('Paris');
    expect(await valueOf('zip')).toBe('75001');
    await driver.type('Lyon', 'city');
    expect(await valueOf('city')).toBe('Lyon');
  });

  it('types into a CSS selector and replaces the previous value', async () => {
    await driver.type('first', '#email');
    await driver.type('second', '#email');
    expect(await valueOf('#email')).toBe('second');
  });

  it('chooses a select option by its text', async () => {
    await driver.type('France', 'Country');
    const { elements } = await driver.observe();
    expect(elements.find((element) => element.name === 'Country')?.value).toBe('France');
    await expectActionError(driver.type('Atlantis', 'Country'), 'target_not_found');
  });

  it('reports target_not_found for a field that does not exist', async () => {
    await expectActionError(driver.type('x', 'Favourite colour'), 'target_not_found');
  });

  it('waits for a field and a button that the page draws after it loaded', async () => {
    await driver.navigate(server.url('/drawn-later'));
    await driver.type('1234', 'Access code');
    await driver.click('Go');
    expect((await driver.observe({ elements: false })).title).toBe('1234');
  });
});

describe('painting and gates', () => {
  it('ends an action once the page took it, painted() once the page painted it, and starts the next action after that', async () => {
    await driver.navigate(server.url('/paint-later'));
    await driver.type('a', 'Slow field');
    const typedAt = Date.now();
    const paintedAt = driver.painted().then(() => Date.now());
    await driver.press('Tab');
    const { busyEnd, tabAt } = JSON.parse(await driver.textOf('#log'));
    // Typing's frame took 300 ms to paint: the typing ended before, painted() after.
    expect(typedAt).toBeLessThan(busyEnd);
    expect(await paintedAt).toBeGreaterThanOrEqual(busyEnd);
    // The Tab was sent once that frame was painted (a few ms of the two clocks' reading apart).
    expect(tabAt).toBeGreaterThanOrEqual(busyEnd - 5);
  });

  it('acts only once its gate passes, telling the gate what the action does', async () => {
    await driver.navigate(server.url('/form'));
    const told: PageEffect[] = [];
    const seenWhileHeld: string[] = [];
    const gate = async (effect: PageEffect) => {
      told.push(effect);
      await new Promise((resolve) => setTimeout(resolve, 200));
      seenWhileHeld.push(await driver.textOf('#out'));
    };
    await driver.click('Say hello', gate);
    expect(seenWhileHeld).toEqual(['nothing yet']);
    expect(await driver.textOf('#out')).toBe('Hello clicked');
    await driver.type('ada', 'Full name', {}, gate);
    await driver.press('Tab', gate);
    await driver.scroll('down', gate);
    await driver.waitForText('Hello clicked', 1_000, gate);
    await driver.navigate(server.url('/next'), gate);
    expect(told).toEqual(['changes', 'types', 'changes', 'changes', 'watches', 'changes']);
  });

  it('does nothing when its gate refuses, and fails a missing target only once the gate passed', async () => {
    await driver.navigate(server.url('/form'));
    const refused = new ActionError('browser_gone', 'the run stopped');
    expect(await driver.click('Say hello', async () => Promise.reject(refused)).catch((error: unknown) => error)).toBe(refused);
    expect(await driver.textOf('#out')).toBe('nothing yet');
    // A target is looked for 2 s; the gate holds 2.5 s.
    let passed = false;
    const failed = driver.click('No such button', async () => {
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      passed = true;
    });
    await expectActionError(failed, 'target_not_found');
    expect(passed).toBe(true);
  });
});

describe('recorded pages', () => {
  it('keeps a focused field\'s caret lit, so a still page sends no frames while recorded', async () => {
    await driver.navigate(server.url('/form'));
    await driver.type('ada', 'Full name');
    const view = await handle.liveView('recording');
    try {
      // Typing's own frames, and the view's first, come at once; a blinking caret then
      // repaints twice a second.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      let frames = 0;
      const stop = view.onFrame(() => (frames += 1));
      frames = 0;
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      stop();
      expect(frames).toBe(0);
    } finally {
      await view.close();
    }
  });
});

describe('another tab', () => {
  it('brings its page in front of a tab opened beside it, where it runs animation frames and paints', async () => {
    await driver.navigate(server.url('/visibility'));
    const answers: Array<{ id?: number; result?: { targetId?: string } }> = [];
    const channel = await handle.openCdpChannel((message) => answers.push(JSON.parse(message)), () => undefined);
    try {
      channel.receive(JSON.stringify({ id: 1, method: 'Target.createTarget', params: { url: 'about:blank' } }));
      await expect.poll(() => answers.find((answer) => answer.id === 1)?.result?.targetId).toBeTruthy();
      // The new tab is in front: the driver's page is behind it.
      await expect.poll(() => driver.textOf('#visibility')).toBe('hidden');
      await driver.click('Press');
      expect(await driver.textOf('#visibility')).toBe('visible');
      const { targetId } = answers.find((answer) => answer.id === 1)!.result!;
      channel.receive(JSON.stringify({ id: 2, method: 'Target.closeTarget', params: { targetId } }));
      await expect.poll(() => answers.some((answer) => answer.id === 2)).toBe(true);
    } finally {
      await channel.close();
    }
  });
});

describe('keys, scrolling, text', () => {
  it('types and clicks on a page whose elements carry cyclic objects of a framework (React)', async () => {
    await driver.navigate(server.url('/framework-form'));
    await driver.type('fiber', 'Access code');
    await driver.click('Go');
    expect((await driver.observe({ elements: false })).title).toBe('fiber');
  });

  it('presses keys and key combinations', async () => {
    await driver.navigate(server.url('/form'));
    await driver.type('abc', '#email');
    await driver.press('Backspace');
    await driver.press('Shift+A');
    const { elements } = await driver.observe();
    expect(elements.find((element) => element.name === 'Email address')?.value).toBe('abA');
    await expectActionError(driver.press('NotAKey'), 'target_not_found');
  });

  it('scrolls without failing', async () => {
    await driver.navigate(server.url('/form'));
    await driver.scroll('down');
    await driver.scroll('up');
  });

  it('waits for text that appears later and times out on text that never does', async () => {
    await driver.navigate(server.url('/form'));
    await driver.waitForText('arrived LATE', 5_000);
    const started = Date.now();
    await expectActionError(driver.waitForText('never shown', 300), 'timeout');
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('reads innerText by selector and rejects missing or invalid selectors', async () => {
    await driver.navigate(server.url('/next'));
    expect(await driver.textOf('#where')).toBe('Second page');
    await expectActionError(driver.textOf('#missing'), 'target_not_found');
    await expectActionError(driver.textOf('[[invalid'), 'target_not_found');
  });
});

describe('open shadow roots', () => {
  beforeEach(async () => {
    await driver.navigate(server.url('/shadow'));
  });

  it('lists elements of open shadow roots, nested ones and slotted names included', async () => {
    const { elements } = await driver.observe();
    const byName = new Map(elements.map((element) => [element.name, element]));
    expect(byName.get('Nickname')).toMatchObject({ role: 'textbox', tag: 'input', value: '' });
    expect(byName.get('Save profile')).toMatchObject({ role: 'button', tag: 'button' });
    expect(byName.get('Nested action')).toMatchObject({ role: 'button', tag: 'button' });
    expect(byName.get('Pay now')).toMatchObject({ role: 'button', tag: 'button' });
    expect(elements.map((element) => element.ref)).toEqual(elements.map((_element, index) => index + 1));
  });

  it('types by label and clicks by text inside a shadow root', async () => {
    await driver.type('ada', 'Nickname');
    await driver.click('Save profile');
    expect(await driver.textOf('#status')).toBe('Saved ada');
    await driver.click('pay now');
    expect(await driver.textOf('#out')).toBe('Fancy clicked');
  });

  it('clicks by ref inside a nested shadow root', async () => {
    const { elements } = await driver.observe();
    await driver.click({ ref: elements.find((element) => element.name === 'Nested action')?.ref ?? -1 });
    expect(await driver.textOf('#out')).toBe('Nested clicked');
  });

  it('waits for text that appears later inside a shadow root', async () => {
    await driver.waitForText('shadow arrived late', 5_000);
  });
});

describe('navigation', () => {
  it('refuses schemes that reach the host or the browser itself with destination_blocked', async () => {
    for (const url of ['file:///etc/passwd', 'chrome://version', 'view-source:http://127.0.0.1/', 'devtools://devtools/bundled/inspector.html']) {
      await expectActionError(driver.navigate(url), 'destination_blocked');
    }
  });

  it('fails with navigation_failed for invalid URLs and unreachable hosts', async () => {
    await expectActionError(driver.navigate('not a url'), 'navigation_failed');
    await expectActionError(driver.navigate('http://127.0.0.1:1/'), 'navigation_failed');
  });
});

describe('allowed domains', () => {
  it('blocks navigation to another host, by link or by address', async () => {
    await driver.setAllowedDomains(['localhost']);
    await driver.navigate(server.url('/cross-host'));
    await expectActionError(driver.click('Other host'), 'domain_not_allowed');
    expect((await driver.observe()).url).toBe(server.url('/cross-host'));
    await expectActionError(driver.navigate(server.url('/next', '127.0.0.1')), 'domain_not_allowed');
    await driver.click('Same host');
    expect(await driver.textOf('#where')).toBe('Second page');
  });

  it('blocks subresources from other hosts and loads them once unrestricted', async () => {
    await driver.setAllowedDomains(['http://LOCALHOST:1234/path']);
    server.requests.length = 0;
    await driver.navigate(server.url('/cross-host'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(server.requests.some((line) => line.includes('/cross-host'))).toBe(true);
    expect(server.requests.some((line) => line.includes('/pixel.gif'))).toBe(false);

    await driver.setAllowedDomains([]);
    await driver.navigate(server.url('/cross-host'));
    await driver.waitForText('Other host', 1_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(server.requests.some((line) => line.startsWith('127.0.0.1') && line.includes('/pixel.gif'))).toBe(true);
  });

  it('blocks a redirect into a disallowed host', async () => {
    await driver.setAllowedDomains(['localhost']);
    await expectActionError(driver.navigate(server.url('/redirect-away')), 'domain_not_allowed');
  });

  it('fails the next action with a navigation blocked after the last one ended, and forgets it as a run starts', async () => {
    const later = `data:text/html,${encodeURIComponent(`<button onclick="setTimeout(() => { location.href = '${server.url('/next', '127.0.0.1')}'; }, 500)">Later</button>`)}`;
    const pause = () => new Promise((resolve) => setTimeout(resolve, 2_500));
    await driver.setAllowedDomains(['localhost']);
    await driver.navigate(later);
    await driver.click('Later');
    await pause();
    await expectActionError(driver.observe(), 'domain_not_allowed');
    // Reported once: the page is still the one the blocked navigation left.
    expect((await driver.observe()).url).toBe(later);

    await driver.click('Later');
    await pause();
    await driver.setAllowedDomains(['localhost']);
    expect((await driver.observe()).url).toBe(later);
  });

  it('allows data: and about:blank while restricted', async () => {
    await driver.setAllowedDomains(['example.com']);
    await driver.navigate('about:blank');
    await driver.navigate('data:text/html,<p id="x">inline</p>');
    expect(await driver.textOf('#x')).toBe('inline');
  });
});

describe('fingerprint and locate (replay cache)', () => {
  const html = (body: string) => `data:text/html,${encodeURIComponent(`<title>t</title>${body}`)}`;

  it('fingerprints the element an action would target and finds it again after the page moved it', async () => {
    await driver.navigate(html('<form><label>Email <input name="email" type="email"></label><button type="submit">Subscribe</button></form>'));
    const button = await driver.fingerprint('Subscribe', 'click');
    expect(button).toMatchObject({ tag: 'button', role: 'button', name: 'Subscribe', text: 'Subscribe', attributes: { type: 'submit' } });
    expect(await driver.fingerprint('Email', 'field')).toMatchObject({ tag: 'input', role: 'textbox', name: 'Email', label: 'Email', attributes: { name: 'email', type: 'email' } });

    await driver.navigate(html('<div><p>Join</p><button type="submit">Subscribe</button></div><form><label>Email <input name="email" type="email"></label></form>'));
    const found = await driver.locate(button!);
    expect(found.status).toBe('found');
    if (found.status !== 'found') return;
    await driver.click(found.target);
    await expectActionError(driver.fingerprint('Nothing like this', 'click'), 'target_not_found');
  });

  it('answers missing for a renamed and moved element and ambiguous for two equal ones', async () => {
    await driver.navigate(html('<form><button type="submit">Subscribe</button></form>'));
    const button = (await driver.fingerprint('Subscribe', 'click'))!;
    await driver.navigate(html('<p>Join</p><button type="submit">Sign me up</button>'));
    expect(await driver.locate(button)).toEqual({ status: 'missing' });
    await driver.navigate(html('<form><button type="submit">Subscribe</button><button type="submit">Subscribe</button></form>'));
    expect(await driver.locate({ ...button, path: 'html:nth-of-type(1)>body:nth-of-type(1)>button:nth-of-type(1)' })).toEqual({ status: 'ambiguous' });
  });
});

// Last: they replace the page every test before them drove.
describe('a crashed or hung page', () => {
  it('fails the action in progress at once with page_crashed, and the next page() is a new page that works', async () => {
    await driver.navigate(server.url('/form'));
    const waiting = driver.waitForText('never shown', 30_000);
    // A renderer dying (out of memory, a fault), as a CDP client can make it.
    const answers: Array<{ id?: number }> = [];
    const channel = await handle.openCdpChannel((message) => answers.push(JSON.parse(message)), () => undefined);
    try {
      channel.receive(JSON.stringify({ id: 1, method: 'Target.getTargets' }));
      await expect.poll(() => answers.some((answer) => answer.id === 1)).toBe(true);
      const { targetInfos } = (answers.find((answer) => answer.id === 1) as { result: { targetInfos: Array<{ targetId: string; type: string }> } }).result;
      const pageTarget = targetInfos.find((target) => target.type === 'page')!;
      channel.receive(JSON.stringify({ id: 2, method: 'Target.attachToTarget', params: { targetId: pageTarget.targetId, flatten: true } }));
      await expect.poll(() => answers.some((answer) => answer.id === 2)).toBe(true);
      const { sessionId } = (answers.find((answer) => answer.id === 2) as { result: { sessionId: string } }).result;
      const started = Date.now();
      channel.receive(JSON.stringify({ id: 3, sessionId, method: 'Page.crash' }));
      await expectActionError(waiting, 'page_crashed');
      expect(Date.now() - started).toBeLessThan(5_000);
      await expectActionError(driver.observe({ elements: false }), 'page_crashed');
    } finally {
      await channel.close();
    }

    const replaced = await handle.page();
    expect(replaced).not.toBe(driver);
    await replaced.navigate(server.url('/next'));
    expect(await replaced.textOf('#where')).toBe('Second page');
    driver = replaced;
  });

  it('replaces a page whose script never yields when a run asks for its page, 10 s on', async () => {
    await driver.navigate(server.url('/hang'));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const started = Date.now();
    const replaced = await handle.page();
    expect(Date.now() - started).toBeGreaterThanOrEqual(10_000);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(replaced).not.toBe(driver);
    await replaced.navigate(server.url('/next'));
    expect(await replaced.textOf('#where')).toBe('Second page');
    driver = replaced;
    // A page that answers is kept, and so is one whose navigation waits for its server.
    expect(await handle.page()).toBe(driver);
    const slow = driver.navigate(server.url('/slow-answer')).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const asked = Date.now();
    expect(await handle.page()).toBe(driver);
    expect(Date.now() - asked).toBeLessThan(2_000);
    await slow;
  });
});
