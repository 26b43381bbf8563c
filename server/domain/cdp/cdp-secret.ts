import { mintSecret } from '../secret-hash';

// The secret of a CDP URL: `cdptok_` plus 32 random bytes in base64url, shown once, in
// `cdp_url`; only its SHA-256 is kept. It has to sit in the URL (DevTools clients such as
// puppeteer.connect and Playwright's connectOverCDP take nothing but a URL), so it opens
// one connection only, and every log line masks it (server/core/log.ts).
const PREFIX = 'cdptok_';
const SECRET_PATTERN = /^cdptok_[A-Za-z0-9_-]{43}$/;

export function mintCdpSecret(): { secret: string; hash: string } {
  return mintSecret(PREFIX);
}

export function isCdpSecretShaped(secret: string): boolean {
  return SECRET_PATTERN.test(secret);
}
