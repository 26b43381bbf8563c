import '@mantine/core/styles.css';
import '@mantine/charts/styles.css';
import { ColorSchemeScript, mantineHtmlProps } from '@mantine/core';
import type { ReactNode } from 'react';
import { Providers } from './providers';

export const metadata = {
  title: 'Browser Device Operator Service',
  description: 'Run natural-language browser tasks on cloud browser devices.',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en" {...mantineHtmlProps}>
      <head>
        <ColorSchemeScript defaultColorScheme="light" />
      </head>
      <body>
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
