'use client';

import { useState, type FormEvent } from 'react';
import { consoleApi, messageOf } from './console-client';

/** Sign-in with the console key `npm run admin -- operator:create` printed. */
export function SignIn({ onSignedIn }: { onSignedIn: (name: string) => void }) {
  const [consoleKey, setConsoleKey] = useState('');
  const [error, setError] = useState<string | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      const { name } = await consoleApi.signIn.mutate({ console_key: consoleKey.trim() });
      onSignedIn(name);
    } catch (failure) {
      setError(messageOf(failure));
    }
  }

  return (
    <main>
      <h1>Operator console</h1>
      <form onSubmit={(event) => void submit(event)}>
        <label htmlFor="console-key">Console key</label>{' '}
        <input id="console-key" type="password" autoComplete="off" value={consoleKey} onChange={(event) => setConsoleKey(event.target.value)} size={50} />{' '}
        <button type="submit">Sign in</button>
      </form>
      {error !== null && <p role="alert">{error}</p>}
      <p>
        Operators get a console key from <code>npm run --silent admin -- operator:create --name NAME</code>.
      </p>
    </main>
  );
}
