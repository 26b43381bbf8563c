'use client';

import { createContext, useContext } from 'react';

/** The signed-in operator, and how a page tells the shell the sign-in has ended. */
export type OperatorSession = { name: string; signedOut: () => void };

export const OperatorContext = createContext<OperatorSession | null>(null);

/** The signed-in operator; only pages inside the console's shell call it. */
export function useOperator(): OperatorSession {
  const session = useContext(OperatorContext);
  if (session === null) throw new Error('useOperator is used outside the console shell');
  return session;
}
