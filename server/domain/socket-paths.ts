/**
 * The API's WebSocket upgrades by path template (`{id}`: the session's public id), declared
 * once: the upgrade router (assembly/entry-points.ts) serves these paths, and the resources
 * build their clients' URLs from them.
 */
export const SOCKET_PATHS = { liveView: '/v1/sessions/{id}/ws', cdp: '/v1/cdp_sessions/{id}/devtools' } as const;

/** A socket's URL on the API origin, `wss:` when the public URL is https (`ws:` for a plain-http local service). */
export function socketUrl(publicUrl: string, socket: keyof typeof SOCKET_PATHS, publicId: string): string {
  return `${publicUrl.replace(/^http/, 'ws')}${SOCKET_PATHS[socket].replace('{id}', publicId)}`;
}
