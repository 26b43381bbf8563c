import { describe, expect, it } from 'vitest';
import { recordedApiRuns } from './recorded-figures';

// bench:api prints its figures beside the recorded ones; if the table's shape changes,
// this fails instead of the comparison silently vanishing.
describe('recordedApiRuns', () => {
  it('reads every run of the API table in docs/performance.md', () => {
    const runs = recordedApiRuns();
    expect(runs.length).toBeGreaterThan(0);
    for (const run of runs) {
      expect(run.throughputRatio).toBeGreaterThan(0);
      expect(run.throughputRatio).toBeLessThan(2);
      expect(run.cpuMicrosPerRequest).toBeGreaterThan(run.bareCpuMicrosPerRequest);
    }
  });
});
