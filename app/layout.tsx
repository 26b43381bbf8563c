import type { ReactNode } from 'react';

export const metadata = {
  title: 'Browser Device Operator Service',
  description: 'Run natural-language browser tasks on cloud browser devices.',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body style={{ fontFamily: 'system-ui, sans-serif', margin: '3rem auto', maxWidth: '44rem', lineHeight: 1.5 }}>{children}</body>
    </html>
  );
}
