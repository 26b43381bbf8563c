// Messages between the service and its spawner (spawner-process.ts) over the spawner's
// IPC channel. `id` is the service's name for one child.

/**
 * Service → spawner: start `file` with `args`, its stdin piped, stdout ignored, stderr
 * kept; at `niceness` (0 to 19) when given.
 */
export interface SpawnRequest {
  id: number;
  file: string;
  args: string[];
  niceness?: number;
}

/**
 * Spawner → service. A started child is reported with its stdin as the message's handle
 * (`stdin`), then, once, how it ended with the start of what it wrote on stderr (`exit`),
 * or `error` when it could not start. stderr travels as text, not as a pipe: a pipe the
 * spawner had already begun to read would lose what the child wrote before it was sent.
 */
export type SpawnReport =
  | { id: number; type: 'stdin'; pid: number }
  | { id: number; type: 'exit'; code: number | null; signal: string | null; stderr: string }
  | { id: number; type: 'error'; message: string };
