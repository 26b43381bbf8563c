import { randomUUID } from 'node:crypto';

// Public ids are a fixed prefix plus a UUID; the database stores the bare UUID.
const PREFIXES = {
  device: 'dev',
  task: 'task',
  session: 'ses',
  cdpSession: 'cdp',
  webhookEndpoint: 'whe',
  escalation: 'esc',
  event: 'evt',
  audit: 'aud',
  request: 'req',
  file: 'file',
  mcpGrant: 'mcpg',
  taskCache: 'tch',
  credential: 'cred',
} as const;

export type IdKind = keyof typeof PREFIXES;

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function toPublicId(kind: IdKind, uuid: string): string {
  return `${PREFIXES[kind]}_${uuid}`;
}

/** The bare UUID of a well-formed public id of this kind, or null (callers answer 404). */
export function parsePublicId(kind: IdKind, value: string): string | null {
  const prefix = `${PREFIXES[kind]}_`;
  if (!value.startsWith(prefix)) return null;
  const uuid = value.slice(prefix.length).toLowerCase();
  return UUID_PATTERN.test(uuid) ? uuid : null;
}

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

export function newPublicId(kind: IdKind): string {
  return toPublicId(kind, randomUUID());
}
