/**
 * What the agent knows of the credential vault (docs/api.md, "Credential vault"): a
 * `type` whose whole text is `{{vault:<name>.<field>}}` fills the credential's value,
 * fetched (a TOTP code computed) at the moment of the fill. The agent holds a value only
 * while it types it and masks it out of everything it records afterwards; the planner,
 * the model included, sees names and domains only.
 */
export const VAULT_FIELDS = ['username', 'password', 'totp', 'code'] as const;
export type VaultField = (typeof VAULT_FIELDS)[number];

export interface VaultPlaceholder {
  name: string;
  field: VaultField;
}

const PLACEHOLDER = /^\{\{vault:([a-z0-9_-]{1,64})\.(username|password|totp|code)\}\}$/;

/** The placeholder a typed text is, as a whole; null for any other text (typed as it is). */
export function parseVaultPlaceholder(text: string): VaultPlaceholder | null {
  const match = PLACEHOLDER.exec(text);
  return match === null ? null : { name: match[1]!, field: match[2] as VaultField };
}

export function vaultPlaceholder(placeholder: VaultPlaceholder): string {
  return `{{vault:${placeholder.name}.${placeholder.field}}}`;
}

/** A credential as the planner may see it: no value, no hint of one. */
export interface VaultEntry {
  name: string;
  domains: string[];
}

/**
 * Why a fill did not happen. `credential_not_found`: no credential of that name in the
 * task's Space, or it holds no such field. `credential_domain_mismatch`: the page is on
 * none of its domains (the phishing guard). `code_not_pushed`: no code was pushed within
 * the wait; the task asks a human for it.
 */
export type VaultRefusal = 'credential_not_found' | 'credential_domain_mismatch' | 'code_not_pushed';

export type VaultValue = { ok: true; value: string } | { ok: false; refusal: VaultRefusal };

export interface VaultFillRequest extends VaultPlaceholder {
  /** The top-level page's URL at the moment of the fill. */
  pageUrl: string;
  /** A `.code` a human already gave for this task (the escalation's answer), used instead of waiting. */
  answeredCode: string | null;
}

/** The task's view of its Space's vault (the task runner builds it over the database). */
export interface Vault {
  entries(): Promise<VaultEntry[]>;
  value(request: VaultFillRequest, signal: AbortSignal): Promise<VaultValue>;
}

/** The escalation field a `.code` nobody pushed is asked for under (a `credentials` escalation). */
export const VAULT_CODE_FIELD = 'code';
