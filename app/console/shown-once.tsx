'use client';

/**
 * A secret the service shows only this once (a new API key, an escalation signing
 * secret), until the operator says they have copied it.
 */
export function ShownOnce({ label, value, testId, onDone }: { label: string; value: string; testId: string; onDone: () => void }) {
  return (
    <p role="status" style={{ background: '#ffd', padding: '0.5rem' }}>
      {label}, shown only now: <code data-testid={testId}>{value}</code>{' '}
      <button type="button" onClick={onDone}>
        Done
      </button>
    </p>
  );
}
