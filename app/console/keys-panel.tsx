'use client';

import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { consoleApi, messageOf, type ApiKeyRow, type Organization } from './console-client';
import { ShownOnce } from './shown-once';

/** An organization's API keys: mint one (shown once), revoke one. */
export function KeysPanel({ organization }: { organization: Organization }) {
  const [keys, setKeys] = useState<ApiKeyRow[]>([]);
  const [allScopes, setAllScopes] = useState<string[]>([]);
  const [chosenScopes, setChosenScopes] = useState<string[]>([]);
  const [chosenSpaces, setChosenSpaces] = useState<string[]>([]);
  const [env, setEnv] = useState<'live' | 'test'>('test');
  const [minted, setMinted] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const refresh = useCallback(() => {
    consoleApi.keys.query({ org_id: organization.id }).then(setKeys, (failure: unknown) => setError(messageOf(failure)));
  }, [organization.id]);
  useEffect(refresh, [refresh]);
  useEffect(() => {
    consoleApi.scopes.query().then(setAllScopes, (failure: unknown) => setError(messageOf(failure)));
  }, []);

  const toggle = (list: string[], value: string) => (list.includes(value) ? list.filter((item) => item !== value) : [...list, value]);

  async function mint(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      const created = await consoleApi.createKey.mutate({ org_id: organization.id, scopes: chosenScopes, space_ids: chosenSpaces, env });
      setMinted(created.key);
      setChosenScopes([]);
      setChosenSpaces([]);
      refresh();
    } catch (failure) {
      setError(messageOf(failure));
    }
  }

  async function revoke(keyId: string) {
    setError(null);
    try {
      await consoleApi.revokeKey.mutate({ key_id: keyId });
      refresh();
    } catch (failure) {
      setError(messageOf(failure));
    }
  }

  return (
    <div>
      <h4>API keys</h4>
      {minted !== null && <ShownOnce label="New key" value={minted} testId="minted-key" onDone={() => setMinted(null)} />}
      <ul>
        {keys.map((key) => (
          <li key={key.key_id}>
            <code>svc_operator_{key.env}_{key.key_id}_****</code> · {key.scopes.join(', ')}
            {key.space_ids.length > 0 && ` · Spaces ${key.space_ids.join(', ')}`} ·{' '}
            {key.revoked_at === null ? (
              <button type="button" onClick={() => void revoke(key.key_id)}>
                Revoke {key.key_id}
              </button>
            ) : (
              `revoked ${new Date(key.revoked_at).toLocaleString()}`
            )}
          </li>
        ))}
      </ul>
      <form onSubmit={(event) => void mint(event)} aria-label={`New key for ${organization.name}`}>
        <fieldset>
          <legend>Scopes</legend>
          {allScopes.map((scope) => (
            <label key={scope} style={{ display: 'inline-block', marginRight: '1rem' }}>
              <input type="checkbox" checked={chosenScopes.includes(scope)} onChange={() => setChosenScopes(toggle(chosenScopes, scope))} /> {scope}
            </label>
          ))}
        </fieldset>
        {organization.spaces.length > 0 && (
          <fieldset>
            <legend>Spaces (none: organization-wide)</legend>
            {organization.spaces.map((space) => (
              <label key={space.id} style={{ marginRight: '1rem' }}>
                <input type="checkbox" checked={chosenSpaces.includes(space.id)} onChange={() => setChosenSpaces(toggle(chosenSpaces, space.id))} /> {space.name}
              </label>
            ))}
          </fieldset>
        )}
        <label>
          Environment{' '}
          <select value={env} onChange={(event) => setEnv(event.target.value === 'live' ? 'live' : 'test')}>
            <option value="test">test</option>
            <option value="live">live</option>
          </select>
        </label>{' '}
        <button type="submit">Create key</button>
      </form>
      {error !== null && <p role="alert">{error}</p>}
    </div>
  );
}
