import '@mantine/core/styles.css';
import '@mantine/charts/styles.css';
import { ColorSchemeScript, MantineProvider, mantineHtmlProps } from '@mantine/core';
import type { ReactNode } from 'react';
import { consoleContrastCss, consoleTheme } from './theme';

export const metadata = {
  title: 'Browser Device Operator Service',
  description: 'Run natural-language browser tasks on cloud browser devices.',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en" {...mantineHtmlProps}>
      <head>
        <ColorSchemeScript defaultColorScheme="light" />
        <style>{consoleContrastCss}</style>
      </head>
      <body>
        <MantineProvider theme={consoleTheme} defaultColorScheme="light">
          {children}
        </MantineProvider>
      </body>
    </html>
  );
}
