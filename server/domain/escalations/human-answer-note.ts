import type { EscalationRow } from './escalation-resource';

/** The placeholder a typing action writes to type a credentials field (the agent's run swaps in the value). */
export function credentialPlaceholder(field: string): string {
  return `{{${field}}}`;
}

/**
 * The `note` of the `human_answer` step a resolve writes, which the planner reads. A
 * credentials answer is never in it: the note names the fields and the placeholder that
 * types each, so the model can use a secret it never sees.
 */
export function humanAnswerNote(escalation: EscalationRow): string | null {
  const answer = escalation.answer;
  switch (escalation.kind) {
    case 'choice': {
      const picked = Array.isArray(answer) ? answer : [answer];
      return `Chosen: ${picked.map((option) => JSON.stringify(option)).join(', ')}`;
    }
    case 'confirm':
      return 'Confirmed: yes';
    case 'credentials': {
      const fields = escalation.fields ?? [];
      const typed = fields.map((field) => `${field} (type it as ${credentialPlaceholder(field)})`).join(', ');
      return `The human provided ${typed}. The values are secret and never shown; a type action whose text is the placeholder types the value.`;
    }
    case 'takeover':
      return typeof answer === 'string' && answer !== '' ? `The human finished acting in the page: ${answer}` : 'The human finished acting in the page.';
    default:
      return typeof answer === 'string' ? answer : null;
  }
}
