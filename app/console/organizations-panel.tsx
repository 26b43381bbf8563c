'use client';

import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { consoleApi, messageOf, type Organization } from './console-client';
import { KeysPanel } from './keys-panel';
import { ShownOnce } from './shown-once';

/** Every organization of the preview, a form to add one, and per organization its Spaces and keys. */
export function OrganizationsPanel() {
  const [organizations, setOrganizations] = useState<Organization[]>([]);
  const [error, setError] = useState<string | null>(null);

  const refresh = useCallback(() => {
    consoleApi.organizations.query().then(setOrganizations, (failure: unknown) => setError(messageOf(failure)));
  }, []);
  useEffect(refresh, [refresh]);

  return (
    <section>
      <h2>Organizations</h2>
      {error !== null && <p role="alert">{error}</p>}
      <NewOrganizationForm onCreated={refresh} />
      {organizations.map((organization) => (
        <OrganizationCard key={organization.id} organization={organization} onChanged={refresh} />
      ))}
    </section>
  );
}

function NewOrganizationForm({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const [escalationUrl, setEscalationUrl] = useState('');
  const [maxDevices, setMaxDevices] = useState('');
  const [entitled, setEntitled] = useState(true);
  const [signingSecret, setSigningSecret] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      const created = await consoleApi.createOrganization.mutate({
        name,
        entitled,
        max_devices: maxDevices === '' ? null : Number(maxDevices),
        max_device_seconds: null,
        escalation_url: escalationUrl === '' ? null : escalationUrl,
      });
      setSigningSecret(created.escalation_signing_secret ?? null);
      setName('');
      setEscalationUrl('');
      setMaxDevices('');
      onCreated();
    } catch (failure) {
      setError(messageOf(failure));
    }
  }

  return (
    <form onSubmit={(event) => void submit(event)} aria-label="New organization">
      <label>
        Organization name <input value={name} onChange={(event) => setName(event.target.value)} required />
      </label>{' '}
      <label>
        Escalation URL <input value={escalationUrl} onChange={(event) => setEscalationUrl(event.target.value)} placeholder="https://…" />
      </label>{' '}
      <label>
        Max devices <input value={maxDevices} onChange={(event) => setMaxDevices(event.target.value)} inputMode="numeric" size={5} />
      </label>{' '}
      <label>
        <input type="checkbox" checked={entitled} onChange={(event) => setEntitled(event.target.checked)} /> Entitled
      </label>{' '}
      <button type="submit">Create organization</button>
      {signingSecret !== null && (
        <ShownOnce label="Escalation signing secret" value={signingSecret} testId="escalation-signing-secret" onDone={() => setSigningSecret(null)} />
      )}
      {error !== null && <p role="alert">{error}</p>}
    </form>
  );
}

function OrganizationCard({ organization, onChanged }: { organization: Organization; onChanged: () => void }) {
  const [spaceName, setSpaceName] = useState('');
  const [signingSecret, setSigningSecret] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function rotateSigningSecret() {
    setError(null);
    try {
      setSigningSecret((await consoleApi.rotateEscalationSecret.mutate({ org_id: organization.id })).escalation_signing_secret);
    } catch (failure) {
      setError(messageOf(failure));
    }
  }

  async function addSpace(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      await consoleApi.createSpace.mutate({ org_id: organization.id, name: spaceName });
      setSpaceName('');
      onChanged();
    } catch (failure) {
      setError(messageOf(failure));
    }
  }

  return (
    <article aria-label={`Organization ${organization.name}`} style={{ border: '1px solid #ccc', padding: '0.5rem 1rem', margin: '1rem 0' }}>
      <h3>{organization.name}</h3>
      <p>
        <code>{organization.id}</code> · {organization.entitled ? 'entitled' : 'not entitled'} · max devices {organization.max_devices ?? 'unlimited'} · escalations to{' '}
        {organization.escalation_url ?? 'nowhere (console only)'}
        {organization.escalation_url !== null && (
          <>
            {' '}
            <button type="button" onClick={() => void rotateSigningSecret()}>
              Rotate escalation signing secret
            </button>
          </>
        )}
      </p>
      {signingSecret !== null && (
        <ShownOnce label="New escalation signing secret" value={signingSecret} testId="escalation-signing-secret" onDone={() => setSigningSecret(null)} />
      )}
      <p>
        Spaces:{' '}
        {organization.spaces.length === 0
          ? 'none'
          : organization.spaces.map((space) => (
              <span key={space.id}>
                {space.name} <code>{space.id}</code>{' '}
              </span>
            ))}
      </p>
      <form onSubmit={(event) => void addSpace(event)}>
        <label>
          Space name <input value={spaceName} onChange={(event) => setSpaceName(event.target.value)} required />
        </label>{' '}
        <button type="submit">Add Space</button>
      </form>
      {error !== null && <p role="alert">{error}</p>}
      <KeysPanel organization={organization} />
    </article>
  );
}
