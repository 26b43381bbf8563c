'use client';

import { MantineProvider } from '@mantine/core';
import type { ReactNode } from 'react';
import { consoleCssVariables, consoleTheme } from './theme';

/** Mantine with the console's theme; a client component, since the theme holds functions a server component cannot pass. */
export function Providers({ children }: { children: ReactNode }) {
  return (
    <MantineProvider theme={consoleTheme} cssVariablesResolver={consoleCssVariables} defaultColorScheme="light">
      {children}
    </MantineProvider>
  );
}
