import { mintSecret, secretMatches } from '../secret-hash';

// The secrets of an escalation's answer_url. Not the resolve bearer (esctok_): the bearer
// is the destination's machine credential, good for as long as the escalation is pending
// and for any number of calls, while the answer_url goes to a person, may be forwarded in
// a chat, and must work exactly once, for watching and taking over as well as answering.
// One secret serving both would either make the bearer one-time (breaking the
// destination's retries) or the link reusable. So each delivery attempt mints both, and
// only their SHA-256 is stored.
//
// `anslnk_` is the link's secret (in the URL's fragment only); opening the link trades it
// for an `ansacc_` access token the page keeps for the rest of its visit.
const LINK_PREFIX = 'anslnk_';
const ACCESS_PREFIX = 'ansacc_';
const LINK_PATTERN = /^anslnk_[A-Za-z0-9_-]{43}$/;
const ACCESS_PATTERN = /^ansacc_[A-Za-z0-9_-]{43}$/;

export function mintAnswerLinkSecret(): { secret: string; hash: string } {
  return mintSecret(LINK_PREFIX);
}

export function mintAnswerAccessToken(): { token: string; hash: string } {
  const { secret, hash } = mintSecret(ACCESS_PREFIX);
  return { token: secret, hash };
}

/** Whether `secret` is one of the link secrets whose hashes are stored, every hash compared in constant time. */
export function matchesAnswerLinkSecret(secret: string, storedHashes: readonly string[]): boolean {
  if (!LINK_PATTERN.test(secret)) return false;
  return storedHashes.map((stored) => secretMatches(secret, stored)).includes(true);
}

export function matchesAnswerAccessToken(token: string, storedHash: string | null): boolean {
  return ACCESS_PATTERN.test(token) && storedHash !== null && secretMatches(token, storedHash);
}

/** The page of an answer link: the escalation's id in the path, the secret only in the fragment, so it never reaches a server's log. */
export function answerUrl(publicUrl: string, escalationPublicId: string, secret: string): string {
  return `${publicUrl}/answer/${escalationPublicId}#${secret}`;
}
