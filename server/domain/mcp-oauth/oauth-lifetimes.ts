/** An authorization code is exchanged at once by the client that asked for it: single use, 60 s. */
export const AUTHORIZATION_CODE_TTL_MS = 60_000;
/** Access tokens are short-lived; a client refreshes them with its refresh token. */
export const ACCESS_TOKEN_TTL_SECS = 3600;
/** A refresh token is single use (each refresh rotates it) and lapses after 30 days unused. */
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600 * 1000;
/** Registrations one address may make per hour (RFC 7591 registration is open). */
export const REGISTRATIONS_PER_ADDRESS_PER_HOUR = 20;
/** A registered client that was never approved is removed after this long. */
export const UNAPPROVED_CLIENT_TTL_MS = 24 * 3600 * 1000;
