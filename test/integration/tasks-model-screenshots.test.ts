import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer } from '../support/scripted-openai-server';
import { apiClient, type ApiCall } from '../support/http';
import { waitForTaskEnd } from '../support/task-helpers';
import { startTaskPages, type TaskPages } from '../support/task-pages';
import { createTenant, startTestService, type TestService } from '../support/test-service';

// OPERATOR_MODEL_SCREENSHOTS=true end to end: real Chromium viewports reach the scripted
// endpoint as image parts.

let test: TestService;
let pages: TaskPages;
let model: ScriptedOpenAiServer;
let api: ApiCall;
let spaceId: string;

beforeAll(async () => {
  pages = await startTaskPages();
  model = await startScriptedOpenAiServer();
  test = await startTestService({
    OPERATOR_MODEL_BASE_URL: model.baseUrl,
    OPERATOR_MODEL_API_KEY: 'sk-scripted-test',
    OPERATOR_MODEL: 'scripted-vision-model',
    OPERATOR_MODEL_SCREENSHOTS: 'true',
  });
  const tenant = await createTenant(test);
  spaceId = tenant.spaceId;
  api = apiClient(test.url, await tenant.key(['operator:devices:write', 'operator:tasks:read', 'operator:tasks:write']));
});
afterAll(async () => {
  await test?.stop();
  await model?.close();
  await pages?.close();
});

describe('tasks on a model planner with screenshots', () => {
  it('sends a JPEG of the viewport with every observation, as an image_url part', async () => {
    model.push(
      { toolCalls: [{ name: 'navigate', arguments: { url: pages.url('/form') } }] },
      { toolCalls: [{ name: 'extract_title', arguments: {} }] },
    );
    const device = await api('POST', '/v1/devices', { space_id: spaceId });
    const submitted = await api('POST', `/v1/devices/${device.body.id}/tasks`, { prompt: 'What is the form called?', allowed_domains: ['127.0.0.1'] });
    expect(await waitForTaskEnd(api, submitted.body.id)).toMatchObject({ status: 'succeeded', result: 'Sign up' });

    expect(model.requests).toHaveLength(2);
    for (const request of model.requests) {
      const content = request.body.messages.find((message) => message.role === 'user')?.content;
      expect(Array.isArray(content)).toBe(true);
      const image = (content as Array<{ type: string; image_url?: { url?: string } }>).find((part) => part.type === 'image_url');
      // A JPEG starts with the bytes FF D8 FF, "/9j/" in base64.
      expect(image?.image_url?.url).toMatch(/^data:image\/jpeg;base64,\/9j\//);
    }
  });
});
