import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from './support/test';
import { expectNoSeriousViolations } from './support/accessibility';
import { base, screenshot } from './support/console';
import { admin } from './admin-cli';

// The page where a person approves a remote MCP client with an API key (docs/api.md, "MCP
// authorization"), in a real browser: checked with axe, answered from the keyboard alone,
// and photographed for the docs. The browser lands on the client's redirect URI with a code.

test.use({ viewport: { width: 1280, height: 800 } });

let client: Server;
let redirectUri: string;

test.beforeAll(async () => {
  client = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('Connected. You may close this window.'));
  await new Promise<void>((resolve) => client.listen(0, '127.0.0.1', resolve));
  redirectUri = `http://127.0.0.1:${(client.address() as AddressInfo).port}/oauth/callback`;
});
test.afterAll(async () => {
  await new Promise((resolve) => client.close(resolve));
});

test('a person approves an MCP client from the keyboard and the client gets a code', async ({ page, request }) => {
  const { org_id: orgId } = admin('org:create', '--name', 'Consent org');
  const { key } = admin('key:create', '--org', orgId, '--scopes', 'operator:devices:read,operator:devices:write,operator:tasks:read,operator:tasks:write');
  const registered = await request.post(`${base()}/oauth/register`, { data: { client_name: 'Claude', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' } });
  expect(registered.status()).toBe(201);
  const { client_id: clientId } = await registered.json();

  const url = new URL(`${base()}/oauth/authorize`);
  const verifier = 'a'.repeat(43);
  const params = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    state: 'e2e',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    scope: 'operator:devices:read operator:devices:write operator:tasks:read operator:tasks:write',
  };
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  await page.goto(url.toString());
  await expect(page.getByRole('heading', { name: 'Allow Claude to use the operator?' })).toBeVisible();
  await expect(page.getByText(new URL(redirectUri).host, { exact: true })).toBeVisible();
  await expectNoSeriousViolations(page);

  // The key field has the focus; Tab reaches Approve, then Deny.
  await expect(page.getByLabel('API key')).toBeFocused();
  await page.keyboard.type(key);
  await page.keyboard.press('Tab');
  await expect(page.getByRole('button', { name: 'Approve' })).toBeFocused();
  await screenshot(page, 'mcp-oauth-consent');
  await page.keyboard.press('Enter');
  await page.waitForURL((landed) => landed.toString().startsWith(redirectUri));
  const landed = new URL(page.url());
  expect(landed.searchParams.get('state')).toBe('e2e');
  expect(landed.searchParams.get('code')).toMatch(/^mcpcode_/);
  // The key never appears in a URL the browser visited.
  expect(page.url()).not.toContain(key);
});
