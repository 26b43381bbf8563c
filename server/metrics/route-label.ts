/** Distinct paths remembered; past it the memory starts over (random 404 paths cannot grow it). */
const MAX_REMEMBERED_PATHS = 10_000;

/**
 * Names a request by its route as the OpenAPI document does (`GET /v1/devices/{id}`), so
 * the latency histogram has one series per route and status, never one per id. `labelOf`
 * is the entry points' (assembly/entry-points.ts): paths no route serves share one label
 * per area (`unmatched` under /v1, `console` for pages). Labels are remembered per path.
 */
export function createRouteLabeler(labelOf: (method: string, path: string) => string): (method: string, path: string) => string {
  const remembered = new Map<string, string>();

  return (method, path) => {
    const key = `${method} ${path}`;
    let label = remembered.get(key);
    if (label === undefined) {
      label = labelOf(method, path);
      if (remembered.size >= MAX_REMEMBERED_PATHS) remembered.clear();
      remembered.set(key, label);
    }
    return label;
  };
}
