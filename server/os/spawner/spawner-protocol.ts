// Messages between the service and its spawner (spawner-process.ts) over the spawner's
// IPC channel. `id` is the service's name for one child.

/** Service → spawner: start `file` with `args`, its stdin and stderr piped, stdout ignored. */
export interface SpawnRequest {
  id: number;
  file: string;
  args: string[];
}

/**
 * Spawner → service. A started child is reported twice, each report carrying one of its
 * pipes as the message's handle (one handle a message): `stdin` (with the pid), then
 * `stderr`; then, once, how it ended: `exit`, or `error` when it could not start.
 */
export type SpawnReport =
  | { id: number; type: 'stdin'; pid: number }
  | { id: number; type: 'stderr' }
  | { id: number; type: 'exit'; code: number | null; signal: string | null }
  | { id: number; type: 'error'; message: string };
