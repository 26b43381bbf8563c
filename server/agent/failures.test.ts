import { describe, expect, it } from 'vitest';
import { FAILURE_DETAILS, FailureCodeSchema, FailureResultSchema, failureResult } from './failures';

describe('failure table', () => {
  it('gives every code one fixed sentence', () => {
    for (const code of FailureCodeSchema.options) {
      const result = failureResult(code);
      expect(FailureResultSchema.parse(result)).toEqual({ error: code, detail: FAILURE_DETAILS[code] });
      expect(result.detail).toMatch(/^[A-Z].*\.$/);
    }
    expect(Object.keys(FAILURE_DETAILS).sort()).toEqual([...FailureCodeSchema.options].sort());
  });

  it('includes the codes CONTRACT.md names', () => {
    expect(FailureCodeSchema.options).toEqual(
      expect.arrayContaining([
        'max_steps_exceeded',
        'domain_not_allowed',
        'navigation_failed',
        'device_lost',
        'planner_error',
        'planner_unsupported',
        'escalation_expired',
        'timeout',
      ]),
    );
  });
});
