'use client';

import { useCallback, useEffect, useRef, useState } from 'react';
import { isSignedOut, messageOf } from './console-client';
import { useOperator } from './operator-context';

export type ConsoleQuery<T> = {
  data: T | undefined;
  /** The failure's sentence, to show in place; null when the last load succeeded. */
  error: string | null;
  loading: boolean;
  reload: () => void;
};

/**
 * Loads one console call when the page opens and whenever `deps` change; an answer that
 * arrives after a newer load started is dropped. A signed-out answer hands back to the
 * shell's sign-in instead of showing an error.
 */
export function useConsoleQuery<T>(load: () => Promise<T>, deps: readonly unknown[]): ConsoleQuery<T> {
  const { signedOut } = useOperator();
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  const reload = useCallback(() => {
    const mine = ++generation.current;
    setLoading(true);
    loadRef.current().then(
      (result) => {
        if (mine !== generation.current) return;
        setData(result);
        setError(null);
        setLoading(false);
      },
      (failure: unknown) => {
        if (mine !== generation.current) return;
        if (isSignedOut(failure)) signedOut();
        setError(messageOf(failure));
        setLoading(false);
      },
    );
  }, [signedOut, ...deps]);

  useEffect(reload, [reload]);
  return { data, error, loading, reload };
}

/** Runs a console change, reporting its failure's sentence (and a signed-out answer to the shell). */
export function useConsoleAction(): { run: <T>(action: () => Promise<T>) => Promise<T | undefined>; error: string | null; pending: boolean; clearError: () => void } {
  const { signedOut } = useOperator();
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const run = useCallback(
    async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
      setPending(true);
      setError(null);
      try {
        return await action();
      } catch (failure) {
        if (isSignedOut(failure)) signedOut();
        setError(messageOf(failure));
        return undefined;
      } finally {
        setPending(false);
      }
    },
    [signedOut],
  );
  return { run, error, pending, clearError: useCallback(() => setError(null), []) };
}
