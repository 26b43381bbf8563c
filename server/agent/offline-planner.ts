import { parseInstructions } from './instruction-parser';
import { PlannerError, type Planner, type PlannerDecision, type PlannerInput } from './planner';

/**
 * The planner used when no model is configured: it carries out the prompt's instructions in
 * order (instruction-parser.ts). It keeps no state: each instruction is recorded as exactly
 * one `action` step, so the number of `action` steps in the history is the number of
 * instructions already done, which is also how a resumed task skips them.
 *
 * When every instruction is done and none was a `return`, the task succeeds with the final
 * page's `{ "url": ..., "title": ... }`: a fixed shape that still tells the caller where
 * the run ended.
 */
export function createOfflinePlanner(): Planner {
  return {
    wantsScreenshots: false,
    // It carries out the prompt's own words: targets are found by the driver, never by ref.
    observesElements: false,
    maxCorrections: 0,
    async next({ prompt, observation, history }: PlannerInput): Promise<PlannerDecision> {
      const parsed = parseInstructions(prompt);
      if (!parsed.ok) throw new PlannerError('planner_unsupported', parsed.problem);
      const done = history.filter((step) => step.type === 'action').length;
      const instruction = parsed.instructions[done];
      if (instruction === undefined) {
        return { action: { kind: 'finish', answer: { url: observation.url, title: observation.title } }, note: null };
      }
      return { action: instruction.action, note: instruction.source };
    },
  };
}
