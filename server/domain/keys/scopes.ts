export const scopes = [
  'operator:devices:read',
  'operator:devices:write',
  'operator:tasks:read',
  'operator:tasks:write',
  'operator:sessions:write',
  'operator:sessions:control',
  'operator:usage:read',
  'operator:audit:read',
  'operator:webhooks:read',
  'operator:webhooks:write',
  'operator:escalations:read',
  'operator:credentials:read',
  'operator:credentials:write',
] as const;

export type Scope = (typeof scopes)[number];

export function isScope(value: string): value is Scope {
  return (scopes as readonly string[]).includes(value);
}
