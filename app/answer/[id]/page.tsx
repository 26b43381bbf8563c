import { AnswerPage } from './answer-page';

export const metadata = { title: 'Answer an escalation · Browser Device Operator Service', referrer: 'no-referrer' };

export default function Page() {
  return <AnswerPage />;
}
