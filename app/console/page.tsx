import { EscalationsInbox } from './escalations-inbox';

export const metadata = { title: 'Escalations · Operator console' };

export default function EscalationsPage() {
  return <EscalationsInbox />;
}
