import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../test/support/service-process';

export interface RecordedApiRun {
  run: string;
  cpuMicrosPerRequest: number;
  bareCpuMicrosPerRequest: number;
  throughputRatio: number;
}

/**
 * The runs docs/performance.md records under "API (platform)", so a new run is printed
 * beside them: a figure that no longer holds is seen at once, not left standing.
 * Rows look like `| 00:42 | 40 464 | 1 / 2 ms | 24.0 µs | ... | 81 859, 11.6 µs | **0.49** (0.44) |`.
 */
export function recordedApiRuns(): RecordedApiRun[] {
  const doc = readFileSync(path.join(PROJECT_ROOT, 'docs/performance.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## API (platform)'), doc.indexOf('\n## ', doc.indexOf('## API (platform)') + 1));
  return section
    .split('\n')
    .filter((line) => /^\| [^|]*\d[^|]* \| [\d ]+ \|/.test(line))
    .map((line) => {
      const cells = line.split('|').map((cell) => cell.trim());
      const micros = (cell: string) => Number(/([\d.]+) µs/.exec(cell)?.[1]);
      return {
        run: cells[1]!,
        cpuMicrosPerRequest: micros(cells[4]!),
        bareCpuMicrosPerRequest: micros(cells[7]!),
        throughputRatio: Number(/\*\*([\d.]+)\*\*/.exec(cells[8]!)?.[1]),
      };
    })
    .filter((run) => Number.isFinite(run.throughputRatio));
}
