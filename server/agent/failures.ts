import { z } from 'zod';
import type { ActionErrorCode } from '../browser/types';

/**
 * Why a task failed. Every code has one fixed, non-leaking detail sentence below; the task
 * `result` of a failed task is exactly `{ error: <code>, detail: <sentence> }`, so no
 * stack, selector dump or transport error text can reach a client.
 */
export const FailureCodeSchema = z.enum([
  'max_steps_exceeded',
  'domain_not_allowed',
  'destination_blocked',
  'navigation_failed',
  'device_lost',
  'page_crashed',
  'element_not_found',
  'action_timeout',
  'planner_error',
  'planner_unsupported',
  'agent_loop',
  'escalation_expired',
  'escalation_not_cleared',
  'confirmation_declined',
  'output_invalid',
  'download_failed',
  'download_too_large',
  'credential_domain_mismatch',
  'credential_not_found',
  'timeout',
  'service_unavailable',
  'internal_error',
]);
export type FailureCode = z.infer<typeof FailureCodeSchema>;

export const FAILURE_DETAILS = {
  max_steps_exceeded: 'The task used all the steps its max_steps allowed before finishing.',
  domain_not_allowed: 'The task tried to open a page outside its allowed domains.',
  // The device's egress policy (public addresses only, by default) refused a page the task opened.
  destination_blocked: "The task tried to open a destination the device's egress policy blocks.",
  navigation_failed: 'A page the task needed could not be loaded.',
  device_lost: "The device's browser stopped while the task was running.",
  // The renderer of the task's page died (out of memory, a fault); the browser lives on.
  page_crashed: "The task's page crashed; the device's next task starts on a new page.",
  // The driver could not find the visible text, selector or element ref a step targeted.
  element_not_found: 'A page element the task needed was not found.',
  // A page action (most often `wait for`) did not see the page reach the expected state.
  action_timeout: 'The page did not reach the expected state in time.',
  planner_error: 'The planner could not decide the next step of the task.',
  planner_unsupported: 'The prompt is not written in the instruction language the built-in planner understands.',
  // The model was told once that it repeated one action on an unchanged page, and did it again.
  agent_loop: 'The model kept repeating the same action on an unchanged page.',
  escalation_expired: 'No human answered the request for help before it expired.',
  // The resolve callback said `cleared: false`: a human looked but what stopped the task stands.
  escalation_not_cleared: 'The human who answered the request for help could not clear what stopped the task.',
  // A human answered `false` to a confirm escalation: the action it asked about is not done.
  confirmation_declined: 'A human declined to confirm an action the task needed to take.',
  // The task's result did not match its output_schema (after the model's corrections, if any).
  output_invalid: "The task's result did not match its output_schema.",
  // The click started no download, or it did not finish in time, or the provider keeps none (browserless).
  download_failed: 'A download the task needed did not complete.',
  // OPERATOR_DOWNLOAD_MAX_FILE_BYTES, or what OPERATOR_DOWNLOAD_MAX_TASK_BYTES left for the task.
  download_too_large: 'A download was larger than the task may keep.',
  // The phishing guard: the top-level page was on none of the credential's domains; nothing was typed.
  credential_domain_mismatch: "The page was not on one of the credential's domains, so nothing was filled.",
  // No credential of that name in the task's Space, or it holds no value for the field asked.
  credential_not_found: "The task's Space holds no credential with the value the task asked for.",
  timeout: 'The task did not finish within its time limit.',
  // The database stayed unreachable past OPERATOR_DATABASE_GRACE_SECS while the task ran.
  service_unavailable: "The service's database was unreachable for longer than the task could wait.",
  // Used by the task runner when runAgent throws (a bug or a failing step store).
  internal_error: 'The task stopped because of an internal error in the service.',
} as const satisfies Record<FailureCode, string>;

export const FailureResultSchema = z.object({
  error: FailureCodeSchema,
  detail: z.string(),
});
export type FailureResult = z.infer<typeof FailureResultSchema>;

export function failureResult(code: FailureCode): FailureResult {
  return { error: code, detail: FAILURE_DETAILS[code] };
}

/** How a failed page action ends the task. */
export const ACTION_ERROR_FAILURES = {
  target_not_found: 'element_not_found',
  navigation_failed: 'navigation_failed',
  domain_not_allowed: 'domain_not_allowed',
  destination_blocked: 'destination_blocked',
  timeout: 'action_timeout',
  browser_gone: 'device_lost',
  page_crashed: 'page_crashed',
  download_failed: 'download_failed',
  download_too_large: 'download_too_large',
} as const satisfies Record<ActionErrorCode, FailureCode>;
