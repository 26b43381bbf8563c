import type { IncomingMessage, ServerResponse } from 'node:http';

/** Cookie holding the console sign-in token (HttpOnly, SameSite=Strict). */
export const CONSOLE_COOKIE = 'svc_console';

/** The sign-in token the request's cookie holds, or null. */
export function readConsoleCookie(req: IncomingMessage): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === CONSOLE_COOKIE) return value.join('=') || null;
  }
  return null;
}

/**
 * Sets the sign-in cookie: HttpOnly so no script reads it, SameSite=Strict so no other
 * site's page sends it, `Secure` when the service is served over https. An empty token
 * with a max age of 0 clears it.
 */
export function setConsoleCookie(res: ServerResponse, publicUrl: string, token: string, maxAgeSecs: number): void {
  const secure = publicUrl.startsWith('https:') ? '; Secure' : '';
  res.setHeader('Set-Cookie', `${CONSOLE_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSecs}${secure}`);
}
