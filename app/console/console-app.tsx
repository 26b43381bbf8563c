'use client';

import { useCallback, useEffect, useState } from 'react';
import { consoleApi, isSignedOut } from './console-client';
import { EscalationsPanel } from './escalations-panel';
import { OrganizationsPanel } from './organizations-panel';
import { SignIn } from './sign-in';

/** The operator console: sign-in, then the escalation queue and the organizations. */
export function ConsoleApp() {
  const [operator, setOperator] = useState<string | null | undefined>(undefined);

  const refreshMe = useCallback(() => {
    consoleApi.me.query().then(
      (me) => setOperator(me.name),
      (error: unknown) => setOperator(isSignedOut(error) ? null : undefined),
    );
  }, []);
  useEffect(refreshMe, [refreshMe]);

  if (operator === undefined) return <p>Loading…</p>;
  if (operator === null) return <SignIn onSignedIn={setOperator} />;
  return (
    <main>
      <header style={{ display: 'flex', justifyContent: 'space-between', alignItems: 'baseline' }}>
        <h1>Operator console</h1>
        <span>
          Signed in as <strong>{operator}</strong>{' '}
          <button type="button" onClick={() => void consoleApi.signOut.mutate().then(() => setOperator(null))}>
            Sign out
          </button>
        </span>
      </header>
      <EscalationsPanel />
      <OrganizationsPanel />
    </main>
  );
}
