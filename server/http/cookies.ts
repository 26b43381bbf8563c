import type { IncomingMessage, ServerResponse } from 'node:http';

/** Cookie holding the console sign-in token. */
export const CONSOLE_COOKIE = 'svc_console';

/** The value of the request's cookie `name` (null when absent or empty). */
export function readCookie(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=') || null;
  }
  return null;
}

/**
 * Sets cookie `name` for `path`: HttpOnly so no script reads it, SameSite=Strict so no
 * other site's page sends it, `Secure` when the service is served over https. An empty
 * value with a max age of 0 clears it; without a max age it lasts the browser's session.
 */
export function setCookie(res: ServerResponse, publicUrl: string, name: string, value: string, options: { path: string; maxAgeSecs?: number }): void {
  const maxAge = options.maxAgeSecs === undefined ? '' : `; Max-Age=${options.maxAgeSecs}`;
  const secure = publicUrl.startsWith('https:') ? '; Secure' : '';
  res.setHeader('Set-Cookie', `${name}=${value}; Path=${options.path}; HttpOnly; SameSite=Strict${maxAge}${secure}`);
}
