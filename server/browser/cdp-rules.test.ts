import { describe, expect, it } from 'vitest';
import { confinedTraceStart, filterTakes, inDeviceContext, isAllowedUrl, isDeviceTarget, parseCdpCommand, ROOT_RULES, sessionRule } from './cdp-rules';

describe('isAllowedUrl', () => {
  it('allows the web, about:blank and data:', () => {
    for (const url of ['http://example.com/', 'https://example.com/a?b', 'about:blank', 'data:text/html,<p>x</p>']) expect(isAllowedUrl(url), url).toBe(true);
  });

  it('refuses schemes that reach the host or the browser, and anything that is not a URL', () => {
    for (const url of ['file:///etc/passwd', 'FILE:///etc/passwd', 'chrome://version', 'devtools://devtools/', 'view-source:http://a/', 'javascript:alert(1)', 'chrome-extension://x/', 'about:config', 'ftp://a/', 'not a url', 42, undefined]) {
      expect(isAllowedUrl(url), String(url)).toBe(false);
    }
  });
});

describe('isDeviceTarget', () => {
  it('in a shared browser, only targets of the device context, never the browser target or Chrome UI', () => {
    const scope = { contextId: 'ctx-device' };
    expect(isDeviceTarget(scope, { targetId: 'a', type: 'page', browserContextId: 'ctx-device' })).toBe(true);
    expect(isDeviceTarget(scope, { targetId: 'b', type: 'page', browserContextId: 'ctx-other' })).toBe(false);
    expect(isDeviceTarget(scope, { targetId: 'c', type: 'page' })).toBe(false);
    expect(isDeviceTarget(scope, { targetId: 'd', type: 'browser', browserContextId: 'ctx-device' })).toBe(false);
    expect(isDeviceTarget(scope, { targetId: 'e', type: 'browser_ui', browserContextId: 'ctx-device' })).toBe(false);
  });

  it('in a browser that is the device, every page-like target', () => {
    const scope = { contextId: null };
    expect(isDeviceTarget(scope, { targetId: 'a', type: 'tab', browserContextId: 'anything' })).toBe(true);
    expect(isDeviceTarget(scope, { targetId: 'b', type: 'browser' })).toBe(false);
  });

  it('never the browser\'s own pages or an extension\'s, whatever type Chrome gives them', () => {
    for (const scope of [{ contextId: null }, { contextId: 'ctx-device' }]) {
      for (const url of ['chrome://omnibox-popup.top-chrome/', 'chrome://settings/', 'chrome-untrusted://print/', 'devtools://devtools/bundled/inspector.html', 'chrome-extension://abcdefghijklmnopabcdefghijklmnop/service-worker.js']) {
        for (const type of ['page', 'tab', 'iframe', 'service_worker']) {
          expect(isDeviceTarget(scope, { targetId: 'x', type, url, browserContextId: 'ctx-device' })).toBe(false);
        }
      }
      for (const url of ['about:blank', 'https://example.com/', 'data:text/html,hi', 'chrome-error://chromewebdata/']) {
        expect(isDeviceTarget(scope, { targetId: 'y', type: 'page', url, browserContextId: 'ctx-device' })).toBe(true);
      }
    }
  });
});

describe('the browser-level allow-list', () => {
  it('names no method that reaches the host or other devices', () => {
    for (const method of ['Browser.crash', 'Browser.crashGpuProcess', 'Browser.getBrowserCommandLine', 'Browser.executeBrowserCommand', 'Target.createBrowserContext', 'Target.disposeBrowserContext', 'Target.exposeDevToolsProtocol', 'Target.sendMessageToTarget', 'Target.setRemoteLocations', 'SystemInfo.getInfo', 'SystemInfo.getProcessInfo', 'Tracing.start', 'IO.read', 'Memory.getBrowserSamplingProfile', 'Extensions.loadUnpacked', 'PWA.install']) {
      expect(ROOT_RULES[method], method).toBeUndefined();
    }
  });

  it('answers download settings itself and ends the connection on Browser.close', () => {
    expect(ROOT_RULES['Browser.setDownloadBehavior']).toEqual({ kind: 'answer', result: {} });
    expect(ROOT_RULES['Browser.close']).toEqual({ kind: 'end_connection' });
    expect(ROOT_RULES['Target.getBrowserContexts']).toEqual({ kind: 'answer', result: { browserContextIds: [] } });
  });

  it('gives a client asking for another browser session one under these same rules, never the browser target itself', () => {
    expect(ROOT_RULES['Target.attachToBrowserTarget']).toEqual({ kind: 'browser_session' });
    expect(isDeviceTarget({ contextId: null }, { targetId: 'B', type: 'browser' })).toBe(false);
  });
});

describe('filterTakes', () => {
  it("reads a Target.TargetFilter as Chrome does: first matching entry decides, none excludes, absent is Chrome's default", () => {
    const puppeteerFilter = [{ type: 'page', exclude: true }, {}];
    expect(filterTakes(puppeteerFilter, 'tab')).toBe(true);
    expect(filterTakes(puppeteerFilter, 'page')).toBe(false);
    expect(filterTakes([{ type: 'page' }], 'tab')).toBe(false);
    expect(filterTakes(undefined, 'page')).toBe(true);
    expect(filterTakes(undefined, 'tab')).toBe(false);
    expect(filterTakes(undefined, 'browser')).toBe(false);
  });
});

describe('sessionRule', () => {
  it('forwards what runs inside a page, and Browser.getVersion', () => {
    for (const method of ['Runtime.evaluate', 'Page.enable', 'Network.enable', 'DOM.getDocument', 'Input.dispatchMouseEvent', 'Emulation.setDeviceMetricsOverride', 'Target.setAutoAttach', 'Browser.getVersion', 'IO.read']) {
      expect(sessionRule(method), method).toEqual({ kind: 'forward' });
    }
  });

  it('checks URLs, confines cookies to the device and refuses what reaches the host or other targets', () => {
    expect(sessionRule('Page.navigate')).toEqual({ kind: 'url', param: 'url', optional: false });
    expect(sessionRule('Fetch.continueRequest')).toEqual({ kind: 'url', param: 'url', optional: true });
    expect(sessionRule('Storage.getCookies')).toEqual({ kind: 'device_context' });
    expect(sessionRule('Target.getTargetInfo')).toEqual({ kind: 'without', param: 'targetId' });
    for (const method of ['DOM.setFileInputFiles', 'Network.loadNetworkResource', 'Page.setDownloadBehavior', 'Target.createTarget', 'Target.attachToTarget', 'Target.setDiscoverTargets', 'Target.getTargets', 'Browser.close', 'SystemInfo.getInfo', 'Extensions.loadUnpacked', 'Unknown.thing']) {
      expect(sessionRule(method), method).toEqual({ kind: 'refuse' });
    }
  });

  it("lets a page be traced only where every context is the device, on Chrome's own tracing backend", () => {
    for (const method of ['Tracing.end', 'Tracing.getCategories']) expect(sessionRule(method), method).toEqual({ kind: 'whole_browser_only' });
    expect(sessionRule('Tracing.start')).toEqual({ kind: 'trace_start' });
    expect(confinedTraceStart({ transferMode: 'ReturnAsStream' })).toEqual({ transferMode: 'ReturnAsStream', tracingBackend: 'chrome' });
    expect(confinedTraceStart({ tracingBackend: 'auto' })).toEqual({ tracingBackend: 'chrome' });
    expect(confinedTraceStart({ tracingBackend: 'system' })).toBeNull();
    expect(confinedTraceStart({ perfettoConfig: 'base64' })).toBeNull();
  });
});

describe('inDeviceContext', () => {
  it("fills in the device's context, and refuses another", () => {
    expect(inDeviceContext({ contextId: 'ctx' }, { a: 1 })).toEqual({ a: 1, browserContextId: 'ctx' });
    expect(inDeviceContext({ contextId: 'ctx' }, { browserContextId: 'ctx' })).toEqual({ browserContextId: 'ctx' });
    expect(inDeviceContext({ contextId: 'ctx' }, { browserContextId: 'other' })).toBeNull();
    expect(inDeviceContext({ contextId: null }, { a: 1 })).toEqual({ a: 1 });
    expect(inDeviceContext({ contextId: null }, { browserContextId: 'other' })).toBeNull();
  });
});

describe('parseCdpCommand', () => {
  it('takes commands and refuses anything else', () => {
    expect(parseCdpCommand('{"id":1,"method":"Browser.getVersion"}')).toEqual({ id: 1, method: 'Browser.getVersion', params: {} });
    expect(parseCdpCommand('{"id":2,"method":"Page.enable","params":{},"sessionId":"S"}')).toEqual({ id: 2, method: 'Page.enable', params: {}, sessionId: 'S' });
    expect(parseCdpCommand('nope')).toEqual({ id: null, invalid: true });
    expect(parseCdpCommand('{"id":3,"method":"no-dot"}')).toEqual({ id: 3, invalid: true });
    expect(parseCdpCommand('{"id":4,"method":"A.b","params":[1]}')).toEqual({ id: 4, invalid: true });
    expect(parseCdpCommand('{"id":-1,"method":"A.b"}')).toEqual({ id: null, invalid: true });
  });
});
