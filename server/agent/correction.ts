/**
 * Why a model's reply was sent back for another try instead of being carried out. Each
 * reason has one fixed sentence: it is what the model is told and what the `correction`
 * step records, so nothing the model wrote (and nothing the page said) is ever echoed.
 */
export type CorrectionReason =
  | 'no_tool_call'
  | 'several_tool_calls'
  | 'unknown_tool'
  | 'invalid_arguments'
  | 'element_not_found'
  | 'navigation_failed'
  | 'repeated_action'
  | 'output_invalid';

export const CORRECTION_TEXTS = {
  no_tool_call: 'Your last reply called no tool. Call exactly one of the tools.',
  several_tool_calls: 'Your last reply called more than one tool. Call exactly one tool per turn.',
  unknown_tool: 'Your last reply called a tool that does not exist. Call one of the tools you were given.',
  invalid_arguments:
    "Your last tool call's arguments were not valid JSON or did not fit the tool's parameters. Call the tool again with valid arguments.",
  element_not_found: 'The element your last action targeted was not found on the page. Target an element of the current page.',
  navigation_failed: 'The page your last action opened could not be loaded. Try another URL or another way.',
  repeated_action:
    'You did the same action on an unchanged page three times in a row. Do something different; the same action once more fails the task.',
  output_invalid: "Your answer did not match the task's output schema. Finish again with an answer that matches it exactly.",
} as const satisfies Record<CorrectionReason, string>;

/** The `action` of a correction step: a machine string naming the reason. */
export function correctionAction(reason: CorrectionReason): string {
  return `correction ${reason}`;
}
