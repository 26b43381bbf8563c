import { EscalationPage } from './escalation-page';

export const metadata = { title: 'Escalation · Operator console' };

export default function Page() {
  return <EscalationPage />;
}
