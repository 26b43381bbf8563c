import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../../db/client';
import { applyMigrations } from '../../../db/migrate';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database';
import { ApiError } from '../../core/errors';
import { createApiKey, createOrganization, revokeApiKey } from '../orgs/operator-admin';
import { Authenticator } from './authenticate';
import { keyRecordLoader, lastUsedRecorder } from './key-record';

describe('Authenticator on a real database', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let lookups = 0;
  let authenticator: Authenticator;

  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    database = connectDatabase(testDatabase.url, 4);
    await applyMigrations(database);
    const load = keyRecordLoader(database.db);
    authenticator = new Authenticator(async (keyId) => {
      lookups += 1;
      return load(keyId);
    }, lastUsedRecorder(database.db));
  });

  afterAll(async () => {
    await database.close();
    await testDatabase.drop();
  });

  async function newKey(): Promise<{ key: string; keyId: string; orgId: string }> {
    const { org_id: orgId } = await createOrganization(database.db, { name: 'auth', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
    const { key, key_id: keyId } = await createApiKey(database.db, { orgId, scopes: ['operator:devices:read'], spaceIds: [], env: 'test' });
    return { key, keyId, orgId };
  }

  it('answers 50 concurrent requests of a cold key with one database lookup', async () => {
    const { key, orgId } = await newKey();
    lookups = 0;
    const principals = await Promise.all(Array.from({ length: 50 }, () => authenticator.authenticate(key)));
    expect(lookups).toBe(1);
    expect(new Set(principals.map((principal) => principal.orgId))).toEqual(new Set([orgId]));
    expect([...principals[0]!.scopes]).toEqual(['operator:devices:read']);
  });

  it('serves a verified key from memory, then looks it up again once the entry is stale', async () => {
    const { key } = await newKey();
    await authenticator.authenticate(key);
    lookups = 0;
    await authenticator.authenticate(key);
    expect(lookups).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 600));
    await authenticator.authenticate(key);
    expect(lookups).toBe(1);
  });

  it('refuses a revoked key within a second, to every waiting request', async () => {
    const { key, keyId } = await newKey();
    await authenticator.authenticate(key);
    await revokeApiKey(database.db, keyId, { publicUrl: 'http://localhost:3000' });
    await new Promise((resolve) => setTimeout(resolve, 600));
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => authenticator.authenticate(key)));
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      expect(((outcome as PromiseRejectedResult).reason as ApiError).apiCode).toBe('invalid_api_key');
    }
  });

  it('refuses a wrong secret, a malformed key and a missing one without trusting them later', async () => {
    const { key } = await newKey();
    const wrongSecret = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
    for (const bearer of [wrongSecret, 'svc_nonsense', null]) {
      await expect(authenticator.authenticate(bearer)).rejects.toMatchObject({ apiCode: 'invalid_api_key' });
    }
    lookups = 0;
    await expect(authenticator.authenticate(wrongSecret)).rejects.toMatchObject({ apiCode: 'invalid_api_key' });
    expect(lookups).toBe(1);
  });
});
