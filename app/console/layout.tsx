import type { ReactNode } from 'react';
import { ConsoleShell } from './console-shell';

export const metadata = { title: 'Operator console · Browser Device Operator Service' };

export default function ConsoleLayout({ children }: { children: ReactNode }) {
  return <ConsoleShell>{children}</ConsoleShell>;
}
