'use client';

import { useCallback, useEffect, useState } from 'react';
import { consoleApi, messageOf, type PendingEscalation } from './console-client';

/** The requests for help waiting for a person, oldest first, each with an answer form. */
export function EscalationsPanel() {
  const [pending, setPending] = useState<PendingEscalation[]>([]);
  const [error, setError] = useState<string | null>(null);

  const refresh = useCallback(() => {
    consoleApi.pendingEscalations.query().then(setPending, (failure: unknown) => setError(messageOf(failure)));
  }, []);
  useEffect(refresh, [refresh]);

  return (
    <section>
      <h2>
        Escalations waiting <button type="button" onClick={refresh}>Refresh</button>
      </h2>
      {error !== null && <p role="alert">{error}</p>}
      {pending.length === 0 ? <p>No escalation is waiting.</p> : pending.map((escalation) => <EscalationCard key={escalation.id} escalation={escalation} onAnswered={refresh} />)}
    </section>
  );
}

function EscalationCard({ escalation, onAnswered }: { escalation: PendingEscalation; onAnswered: () => void }) {
  const [answer, setAnswer] = useState('');
  const [cleared, setCleared] = useState(true);
  const [error, setError] = useState<string | null>(null);

  async function send() {
    try {
      await consoleApi.answerEscalation.mutate({ id: escalation.id, answer, cleared });
      onAnswered();
    } catch (failure) {
      setError(messageOf(failure));
    }
  }

  return (
    <article aria-label={`Escalation ${escalation.id}`} style={{ border: '1px solid #ccc', padding: '0.5rem 1rem', marginBottom: '1rem' }}>
      <p>
        <strong>{escalation.organization}</strong> · {escalation.kind} · task <code>{escalation.task_id}</code> · expires {new Date(escalation.expires_at).toLocaleString()}
      </p>
      <blockquote>{escalation.reason}</blockquote>
      <label>
        Answer <input value={answer} onChange={(event) => setAnswer(event.target.value)} size={40} />
      </label>{' '}
      <label>
        <input type="checkbox" checked={cleared} onChange={(event) => setCleared(event.target.checked)} /> Cleared
      </label>{' '}
      <button type="button" onClick={() => void send()}>
        Send answer
      </button>
      {error !== null && <p role="alert">{error}</p>}
    </article>
  );
}
