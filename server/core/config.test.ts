import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENV_VARIABLES, loadConfig } from './config';

describe('loadConfig', () => {
  it('applies the CONTRACT.md defaults', () => {
    const config = loadConfig({});
    expect(config.http.port).toBe(3000);
    expect(config.http.publicUrl).toBe('http://localhost:3000');
    expect(config.db.url).toBeNull();
    expect(config.browser.kind).toBe('local');
    expect(config.agent.model).toBeNull();
    expect(config.rateLimit).toMatchObject({ perSecond: 20, burst: 40 });
    expect(config.webhooks.allowPrivateDestinations).toBe(false);
    expect(config.regions).toEqual(['local']);
    expect(config.limits).toEqual({ authFailures: { limit: 20, windowSecs: 60 }, eventStreamsPerKey: 10, socketsPerSession: 4, sessionInputQueue: 64, connections: 4096 });
    expect(config.http.trustedProxies).toEqual([]);
  });

  it('reads a model endpoint only when base URL and model are both set', () => {
    expect(loadConfig({ OPERATOR_MODEL_BASE_URL: 'http://127.0.0.1:1/v1' }).agent.model).toBeNull();
    expect(loadConfig({ OPERATOR_MODEL_BASE_URL: 'http://127.0.0.1:1/v1', OPERATOR_MODEL: 'm', OPERATOR_MODEL_API_KEY: 'k' }).agent.model).toEqual({
      baseUrl: 'http://127.0.0.1:1/v1',
      apiKey: 'k',
      model: 'm',
      maxCorrections: 3,
      contextTokens: 24_000,
      screenshots: false,
    });
    expect(
      loadConfig({
        OPERATOR_MODEL_BASE_URL: 'http://127.0.0.1:1/v1',
        OPERATOR_MODEL: 'm',
        OPERATOR_MODEL_MAX_CORRECTIONS: '0',
        OPERATOR_MODEL_CONTEXT_TOKENS: '8000',
        OPERATOR_MODEL_SCREENSHOTS: 'true',
      }).agent.model,
    ).toMatchObject({ maxCorrections: 0, contextTokens: 8000, screenshots: true });
  });

  it('refuses invalid values with a message naming the variable', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ OPERATOR_BROWSER: 'browserless' })).toThrow(/BROWSERLESS_URL/);
    expect(() => loadConfig({ OPERATOR_WEBHOOK_RETRY_SCHEDULE_MS: '50,soon' })).toThrow(/OPERATOR_WEBHOOK_RETRY_SCHEDULE_MS/);
    expect(loadConfig({ OPERATOR_WEBHOOK_RETRY_SCHEDULE_MS: '50, 100' }).webhooks.retryScheduleMs).toEqual([50, 100]);
    for (const proxies of ['10.0.0.0/33', 'proxy.internal', '10.0.0.1/8/8', '::1/129']) {
      expect(() => loadConfig({ OPERATOR_TRUSTED_PROXIES: proxies })).toThrow(/OPERATOR_TRUSTED_PROXIES/);
    }
    expect(loadConfig({ OPERATOR_TRUSTED_PROXIES: '10.0.0.0/8, 192.0.2.1,::1' }).http.trustedProxies).toEqual(['10.0.0.0/8', '192.0.2.1', '::1']);
  });

  it('has every variable it reads listed in .env.example, and no other', () => {
    const example = readFileSync(path.resolve(import.meta.dirname, '../../.env.example'), 'utf8');
    const listed = [...example.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((match) => match[1]);
    expect([...listed].sort()).toEqual([...ENV_VARIABLES].sort());
  });
});
