import { ConsoleApp } from './console-app';

export const metadata = { title: 'Operator console · Browser Device Operator Service' };

export default function ConsolePage() {
  return <ConsoleApp />;
}
