import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auth, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents, mcpOauthGrants, mcpOauthTokens } from '../../db/schema';
import { parseApiKey } from '../../server/domain/keys/api-key-format';
import { pkceChallengeOf } from '../../server/domain/mcp-oauth/oauth-secrets';
import { deleteExpiredOAuthTokens } from '../../server/domain/mcp-oauth/token-retention';
import { revokeApiKey } from '../../server/domain/orgs/operator-admin';
import { freePort } from '../support/free-port';
import { allScopes, createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// /mcp as an OAuth-protected resource, driven by the MCP SDK's own OAuth client (the code
// Claude's and ChatGPT's connectors and the MCP Inspector share): discovery from the 401,
// dynamic registration, the consent page (the test plays the person), code + PKCE,
// refresh, revocation; and the refusals a careless or hostile client meets.

let test: TestService;
let tenant: TestTenant;
let key: string;
let callback: Server;
let redirectUri: string;
/** What reached the redirect URI, by state. */
const arrivals = new Map<string, URLSearchParams>();

beforeAll(async () => {
  // The service must know its public URL before it listens (it is the issuer and the resource).
  const port = await freePort();
  test = await startTestService({ PORT: String(port), OPERATOR_PUBLIC_URL: `http://127.0.0.1:${port}` });
  tenant = await createTenant(test);
  key = await tenant.key(allScopes);
  callback = createServer((req, res) => {
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    arrivals.set(query.get('state') ?? '', query);
    res.writeHead(200, { 'Content-Type': 'text/plain' }).end('You may close this window.');
  });
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
});
afterAll(async () => {
  await test?.stop();
  callback?.close();
});

function decodeHtml(text: string): string {
  return text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
}

/** The person: opens the consent page, answers it, and the browser follows the redirect to the client. */
async function answerConsent(authorizationUrl: URL, apiKey: string, decision: 'approve' | 'deny' = 'approve'): Promise<{ status: number; params: URLSearchParams | null; html: string }> {
  const page = await fetch(authorizationUrl);
  expect(page.status).toBe(200);
  const cookie = page.headers.get('set-cookie')!.split(';', 1)[0]!;
  const form = Object.fromEntries([...(await page.text()).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((match) => [match[1]!, decodeHtml(match[2]!)]));
  const answer = await fetch(`${test.url}/oauth/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie },
    body: new URLSearchParams({ ...form, api_key: apiKey, decision }),
  });
  if (answer.status !== 303) return { status: answer.status, params: null, html: await answer.text() };
  const location = new URL(answer.headers.get('location')!);
  expect(`${location.origin}${location.pathname}`).toBe(redirectUri);
  expect((await fetch(location)).status).toBe(200);
  return { status: 303, params: arrivals.get(location.searchParams.get('state') ?? '')!, html: '' };
}

/** An OAuthClientProvider as an MCP client implements it, approving with `apiKey` when sent to the consent page. */
class PersonApprovedProvider implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  code: string | null = null;
  readonly #state = `state-${Math.random().toString(36).slice(2)}`;

  constructor(private readonly apiKey: string) {}

  get redirectUrl() {
    return redirectUri;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'Test <MCP> client', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] };
  }
  state() {
    return this.#state;
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  async redirectToAuthorization(authorizationUrl: URL) {
    const { params } = await answerConsent(authorizationUrl, this.apiKey);
    expect(params?.get('state')).toBe(this.#state);
    expect(params?.get('iss')).toBe(test.url);
    this.code = params?.get('code') ?? null;
  }
}

const mcpUrl = () => new URL(`${test.url}/mcp`);

/** Connects as a remote MCP client does: the first attempt meets the 401, the person approves, the code is exchanged, and it connects again. */
async function connectThroughOAuth(provider: PersonApprovedProvider): Promise<Client> {
  const first = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
  await expect(new Client({ name: 'remote', version: '1.0.0' }).connect(first)).rejects.toThrow(UnauthorizedError);
  expect(provider.code).toMatch(/^mcpcode_/);
  await first.finishAuth(provider.code!);
  const client = new Client({ name: 'remote', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider }));
  return client;
}

function json(result: unknown): any {
  const content = (result as CallToolResult).content[0];
  if (content?.type !== 'text') throw new Error('expected a text result');
  return JSON.parse(content.text);
}

function rawMcp(bearer: string | null, method = 'tools/list') {
  return fetch(mcpUrl(), {
    method: 'POST',
    headers: { ...(bearer === null ? {} : { Authorization: `Bearer ${bearer}` }), 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method }),
  });
}

function form(path: string, fields: Record<string, string>) {
  return fetch(`${test.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
}

async function grantOf(accessToken: string) {
  const { createHash } = await import('node:crypto');
  const [row] = await test.service.services.db
    .select({ grant: mcpOauthGrants })
    .from(mcpOauthTokens)
    .innerJoin(mcpOauthGrants, eq(mcpOauthGrants.id, mcpOauthTokens.grantId))
    .where(eq(mcpOauthTokens.tokenHash, createHash('sha256').update(accessToken).digest('hex')));
  return row!.grant;
}

describe('MCP authorization', () => {
  it('challenges with the protected resource metadata, which leads to the authorization server', async () => {
    const anonymous = await rawMcp(null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${test.url}/.well-known/oauth-protected-resource/mcp"`);
    expect((await anonymous.json()).error).toMatchObject({ code: 'invalid_api_key', request_id: anonymous.headers.get('x-request-id') });
    expect((await rawMcp('svc_operator_test_aaaaaaaaaaaa_nope')).headers.get('www-authenticate')).toContain('error="invalid_token"');

    const resource = await (await fetch(`${test.url}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(resource).toMatchObject({ resource: `${test.url}/mcp`, authorization_servers: [test.url], bearer_methods_supported: ['header'] });
    expect(resource.scopes_supported).toEqual([...allScopes]);
    const server = await (await fetch(`${test.url}/.well-known/oauth-authorization-server`)).json();
    expect(server).toMatchObject({
      issuer: test.url,
      authorization_endpoint: `${test.url}/oauth/authorize`,
      token_endpoint: `${test.url}/oauth/token`,
      registration_endpoint: `${test.url}/oauth/register`,
      revocation_endpoint: `${test.url}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
    });
  });

  it('lets an MCP client in through discovery, registration, consent and code + PKCE; its calls act as the key, and refresh rotates', async () => {
    const provider = new PersonApprovedProvider(key);
    const client = await connectThroughOAuth(provider);
    expect(provider.information?.client_id).toMatch(/^mcpc_/);
    const accessToken = provider.saved!.access_token;
    expect(accessToken).toMatch(/^mcpat_/);
    expect(provider.saved).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: allScopes.join(' ') });
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('run_task');

    const device = json(await client.callTool({ name: 'create_device', arguments: { space_id: tenant.spaceId } }));
    expect(device).toMatchObject({ object: 'device', status: 'active' });
    json(await client.callTool({ name: 'delete_device', arguments: { device_id: device.id } }));
    const db = test.service.services.db;
    const grant = await grantOf(accessToken);
    const keyId = parseApiKey(key)!.keyId;
    expect(grant).toMatchObject({ keyId, resource: `${test.url}/mcp`, redirectUri });
    const grantId = `mcpg_${grant.id}`;
    const [created] = await db.select().from(auditEvents).where(and(eq(auditEvents.action, 'operator.device.created'), eq(auditEvents.resourceId, device.id)));
    expect(created).toMatchObject({ actor: keyId, details: expect.objectContaining({ oauth_grant_id: grantId }) });
    const [approved] = await db.select().from(auditEvents).where(and(eq(auditEvents.action, 'operator.oauth_grant.created'), eq(auditEvents.resourceId, grantId)));
    expect(approved).toMatchObject({ actor: keyId, details: expect.objectContaining({ client_name: 'Test <MCP> client', client_id: provider.information!.client_id }) });
    // Neither the key nor any token is in the audit trail.
    expect(JSON.stringify(approved)).not.toContain('mcpat_');

    // Refresh: the SDK's auth() with a refresh token rotates both tokens.
    const firstRefresh = provider.saved!.refresh_token!;
    expect(await auth(provider, { serverUrl: mcpUrl() })).toBe('AUTHORIZED');
    expect(provider.saved!.refresh_token).not.toBe(firstRefresh);
    expect((await rawMcp(provider.saved!.access_token)).status).toBe(200);
    // The first refresh token, presented again, is reuse: the grant ends, every token with it.
    const reused = await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: firstRefresh, client_id: provider.information!.client_id });
    expect(reused.status).toBe(400);
    expect(await reused.json()).toMatchObject({ error: 'invalid_grant' });
    expect((await rawMcp(provider.saved!.access_token)).status).toBe(401);
    const [ended] = await db.select().from(auditEvents).where(and(eq(auditEvents.action, 'operator.oauth_grant.revoked'), eq(auditEvents.resourceId, grantId)));
    expect(ended).toMatchObject({ actor: 'system', details: { why: 'refresh_token_reused' } });
  });

  it('ends a grant revoked by its client (RFC 7009), and every grant of a revoked key at once', async () => {
    const provider = new PersonApprovedProvider(key);
    await connectThroughOAuth(provider);
    const clientId = provider.information!.client_id;
    expect((await form('/oauth/revoke', { token: provider.saved!.refresh_token!, client_id: 'mcpc_someone_else' })).status).toBe(401);
    const revoked = await form('/oauth/revoke', { token: provider.saved!.refresh_token!, token_type_hint: 'refresh_token', client_id: clientId });
    expect(revoked.status).toBe(200);
    const refused = await rawMcp(provider.saved!.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('resource_metadata=');
    expect((await form('/oauth/revoke', { token: 'mcpat_unknown', client_id: clientId })).status).toBe(200);

    const ownKey = await tenant.key(allScopes);
    const other = new PersonApprovedProvider(ownKey);
    const client = await connectThroughOAuth(other);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await revokeApiKey(test.service.services.db, parseApiKey(ownKey)!.keyId, { publicUrl: test.url });
    expect((await rawMcp(other.saved!.access_token)).status).toBe(401);
    const refresh = await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: other.saved!.refresh_token!, client_id: other.information!.client_id });
    expect(await refresh.json()).toMatchObject({ error: 'invalid_grant' });
    const grant = await grantOf(other.saved!.access_token);
    expect(grant.revokedReason).toBe('api_key_revoked');
  });

  it('gives a token only the scopes of the key it was approved with: a read-only key cannot call a write tool', async () => {
    const provider = new PersonApprovedProvider(await tenant.key(['operator:devices:read']));
    const client = await connectThroughOAuth(provider);
    expect(provider.saved!.scope).toBe('operator:devices:read');
    expect(json(await client.callTool({ name: 'list_devices', arguments: {} })).data).toEqual(expect.any(Array));
    const denied = await client.callTool({ name: 'create_device', arguments: { space_id: tenant.spaceId } });
    expect(denied.isError).toBe(true);
    expect(json(denied).error).toMatchObject({ code: 'insufficient_scope', request_id: expect.stringMatching(/^req_/) });
  });

  it('sweeps expired tokens, keeping live ones and used refresh tokens until they expire', async () => {
    const provider = new PersonApprovedProvider(key);
    await connectThroughOAuth(provider);
    const db = test.service.services.db;
    const grant = await grantOf(provider.saved!.access_token);
    await db.insert(mcpOauthTokens).values({ tokenHash: 'f'.repeat(64), grantId: grant.id, kind: 'refresh', expiresAt: new Date(Date.now() - 1000), usedAt: new Date() });
    await deleteExpiredOAuthTokens(db);
    const left = await db.select({ kind: mcpOauthTokens.kind, hash: mcpOauthTokens.tokenHash }).from(mcpOauthTokens).where(eq(mcpOauthTokens.grantId, grant.id));
    expect(left.map((row) => row.kind).sort()).toEqual(['access', 'refresh']);
    expect(left.map((row) => row.hash)).not.toContain('f'.repeat(64));
  });

  describe('the MCP Inspector CLI (2.12)', () => {
    const INSPECTOR = path.resolve(import.meta.dirname, '../../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');
    /** Runs `inspector --cli` with the pinned Node (it needs >= 22.19), its stored secrets in a home of its own. */
    async function inspector(bearer: string, ...args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
      const home = await mkdtemp(path.join(tmpdir(), 'inspector-'));
      try {
        return await new Promise((resolve) => {
          const argv = [INSPECTOR, '--cli', `${test.url}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${bearer}`, ...args];
          execFile(process.execPath, argv, { env: { ...process.env, HOME: home }, timeout: 60_000 }, (error, stdout, stderr) =>
            resolve({ exitCode: error === null ? 0 : Number((error as NodeJS.ErrnoException).code), stdout, stderr }),
          );
        });
      } finally {
        await rm(home, { recursive: true, force: true });
      }
    }

    it('lists the tools with an API key as the bearer, and shows a tool error with its request id', async () => {
      const listed = await inspector(key, '--method', 'tools/list');
      expect(listed.exitCode).toBe(0);
      expect(JSON.parse(listed.stdout).tools.map((tool: { name: string }) => tool.name)).toContain('run_task');
      const failed = await inspector(key, '--method', 'tools/call', '--tool-name', 'get_device', '--tool-arg', 'device_id=dev_nope');
      expect(failed.exitCode).toBe(5);
      expect(JSON.parse(JSON.parse(failed.stdout).content[0].text).error).toMatchObject({ code: 'device_not_found', request_id: expect.stringMatching(/^req_/) });
    });

    it('reports a wrong key: as invalid_api_key with --stored-auth-only, else as the OAuth login it cannot open without a TTY', async () => {
      const wrong = 'svc_operator_test_aaaaaaaaaaaa_nope';
      const stored = await inspector(wrong, '--method', 'tools/list', '--stored-auth-only');
      expect(stored.exitCode).toBe(3);
      expect(stored.stderr).toContain('invalid_api_key');
      expect(stored.stderr).not.toContain(wrong);
      const interactive = await inspector(wrong, '--method', 'tools/list');
      expect(interactive.exitCode).toBe(3);
      expect(interactive.stderr).toContain('Interactive OAuth requires a TTY');
    });
  });

  describe('refusals', () => {
    async function registered(): Promise<string> {
      const response = await fetch(`${test.url}/oauth/register`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ client_name: 'raw', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }) });
      expect(response.status).toBe(201);
      return (await response.json()).client_id;
    }
    function authorizationUrl(clientId: string, verifier: string, state: string, overrides: Record<string, string> = {}): URL {
      const url = new URL(`${test.url}/oauth/authorize`);
      const params = { response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state, code_challenge: pkceChallengeOf(verifier), code_challenge_method: 'S256', scope: 'operator:devices:read', resource: `${test.url}/mcp`, ...overrides };
      for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
      return url;
    }
    const verifier = 'v'.repeat(43);

    it('refuses a wrong PKCE verifier, a wrong redirect_uri, and a code used twice (which ends what the code gave)', async () => {
      const clientId = await registered();
      const { params } = await answerConsent(authorizationUrl(clientId, verifier, 'pkce'), key);
      const code = params!.get('code')!;
      const exchange = (fields: Record<string, string>) => form('/oauth/token', { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: redirectUri, code_verifier: verifier, ...fields });
      expect(await (await exchange({ code_verifier: 'w'.repeat(43) })).json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('PKCE') });
      expect(await (await exchange({ redirect_uri: `${redirectUri}/other` })).json()).toMatchObject({ error: 'invalid_grant' });
      const tokens = await (await exchange({})).json();
      expect(tokens.access_token).toMatch(/^mcpat_/);
      expect((await rawMcp(tokens.access_token)).status).toBe(200);
      const again = await exchange({});
      expect(again.status).toBe(400);
      expect(await again.json()).toMatchObject({ error: 'invalid_grant', request_id: expect.stringMatching(/^req_/) });
      expect((await rawMcp(tokens.access_token)).status).toBe(401);
    });

    it('shows, and never redirects, a request with an unregistered redirect_uri; sends errors of a known one back to it', async () => {
      const clientId = await registered();
      const stray = await fetch(authorizationUrl(clientId, verifier, 's', { redirect_uri: 'https://attacker.example/cb' }), { redirect: 'manual' });
      expect(stray.status).toBe(400);
      expect(await stray.text()).toContain('not one this client registered');
      const plain = await fetch(authorizationUrl(clientId, verifier, 'plain', { code_challenge_method: 'plain' }), { redirect: 'manual' });
      expect(plain.status).toBe(303);
      expect(new URL(plain.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
      const registration = await fetch(`${test.url}/oauth/register`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ redirect_uris: ['http://example.com/cb'] }) });
      expect(await registration.json()).toMatchObject({ error: 'invalid_redirect_uri' });
    });

    it('keeps the consent form CSRF-safe, refuses a wrong key on the page, and sends a denial back as access_denied', async () => {
      const clientId = await registered();
      const url = authorizationUrl(clientId, verifier, 'csrf');
      const forged = await fetch(`${test.url}/oauth/authorize`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...Object.fromEntries(url.searchParams), api_key: key, decision: 'approve', csrf_token: 'guessed' }),
      });
      expect(forged.status).toBe(403);
      const wrong = await answerConsent(url, 'svc_operator_test_aaaaaaaaaaaa_nope');
      expect(wrong.status).toBe(401);
      expect(wrong.html).toContain('That API key is not valid');
      expect(wrong.html).not.toContain('svc_operator_test_aaaaaaaaaaaa_nope');
      const denied = await answerConsent(authorizationUrl(clientId, verifier, 'deny'), '', 'deny');
      expect(denied.params?.get('error')).toBe('access_denied');
    });
  });
});
