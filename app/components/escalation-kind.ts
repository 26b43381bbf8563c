import type { AnswerKind } from '../../shared/answer-schema';

/** The parts of an escalation that say what answer it needs and until when (the API's Escalation fields). */
export interface AnswerableEscalation {
  kind: AnswerKind;
  options: string[] | null;
  multiple: boolean | null;
  fields: { name: string; secret: boolean }[] | null;
  expires_at: string;
  on_timeout: 'fail' | 'continue';
}

/** What answer an escalation's kind asks for, in words. */
export function kindInWords(escalation: Pick<AnswerableEscalation, 'kind' | 'multiple'>): string {
  switch (escalation.kind) {
    case 'choice':
      return escalation.multiple === true ? 'Choice: pick one or more of the options' : 'Choice: pick one of the options';
    case 'confirm':
      return 'Confirmation: yes or no';
    case 'credentials':
      return 'Credentials: fill in secret fields';
    case 'takeover':
      return 'Takeover: act on the device’s page yourself';
    case 'captcha':
      return 'Captcha: solve it on the device’s page, or answer in words';
    case 'login':
      return 'Sign-in: sign in on the device’s page, or answer in words';
    case 'blocked':
      return 'Blocked page: get past it on the device’s page, or answer in words';
    default:
      return 'Question: answer in words';
  }
}

/** What happens at the expiry if nobody answers (the escalation's `on_timeout`). */
export function timeoutInWords(onTimeout: AnswerableEscalation['on_timeout']): string {
  return onTimeout === 'continue' ? 'the task goes on without an answer' : 'the task fails (escalation_expired)';
}
