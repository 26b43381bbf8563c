import { setTimeout as sleep } from 'node:timers/promises';
import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { credentials } from '../../../db/schema';
import type { Vault, VaultFillRequest, VaultValue } from '../../agent/vault-fill';
import { recordAudit } from '../audit/record-audit';
import { dbNow } from '../db-clock';
import { toPublicId } from '../ids';
import { systemActor } from '../keys/principal';
import { takeFreshestCode } from './credential-codes';
import { sealContext } from './credential-resource';
import { pageMatchesDomains } from './registrable-domain';
import type { SecretBox } from './secret-box';
import { totpCode, TotpParametersSchema } from './totp';

/** How long a fill of `.code` waits for a push before the task asks a human. */
export const CODE_WAIT_MS = 2 * 60_000;
/** How often it looks for one meanwhile. */
const CODE_POLL_MS = 1_000;

export interface TaskVaultDeps {
  db: Db;
  secrets: SecretBox;
}

/** Names and domains a task's model may be shown. */
const ENTRY_LIMIT = 100;

/**
 * The vault of one task's Space. A value is read (a TOTP code computed) only once the page
 * passed the domain check, at the moment of the fill, and the fill is audited by field
 * name; the value never leaves this function but to the agent that types it.
 */
export function taskVault(deps: TaskVaultDeps, task: { id: string; orgId: string; spaceId: string }, options: { codeWaitMs?: number } = {}): Vault {
  const codeWaitMs = options.codeWaitMs ?? CODE_WAIT_MS;
  return {
    async entries() {
      const rows = await deps.db
        .select({ name: credentials.name, domains: credentials.domains })
        .from(credentials)
        .where(and(eq(credentials.orgId, task.orgId), eq(credentials.spaceId, task.spaceId)))
        .orderBy(asc(credentials.name))
        .limit(ENTRY_LIMIT);
      return rows;
    },

    async value(request: VaultFillRequest, signal: AbortSignal): Promise<VaultValue> {
      const [row] = await deps.db
        .select()
        .from(credentials)
        .where(and(eq(credentials.orgId, task.orgId), eq(credentials.spaceId, task.spaceId), eq(credentials.name, request.name)));
      if (row === undefined) return { ok: false, refusal: 'credential_not_found' };
      if (!pageMatchesDomains(request.pageUrl, row.domains)) return { ok: false, refusal: 'credential_domain_mismatch' };
      let value: string | null;
      switch (request.field) {
        case 'username':
          value = row.username;
          break;
        case 'password':
          value = row.passwordSealed === null ? null : deps.secrets.open(row.passwordSealed, sealContext(row.id, 'password'));
          break;
        case 'totp': {
          const sealed = row.totpSealed;
          value = sealed === null ? null : totpCode(TotpParametersSchema.parse(JSON.parse(deps.secrets.open(sealed, sealContext(row.id, 'totp')))), Date.now());
          break;
        }
        case 'code':
          value = request.answeredCode ?? (await waitForCode(deps, row.id, codeWaitMs, signal));
          if (value === null) return { ok: false, refusal: 'code_not_pushed' };
          break;
      }
      if (value === null) return { ok: false, refusal: 'credential_not_found' };
      await deps.db.transaction(async (tx) => {
        await tx.update(credentials).set({ lastUsedAt: dbNow() }).where(eq(credentials.id, row.id));
        await recordAudit(tx, systemActor(task.orgId), {
          action: 'operator.credential.used',
          resourceType: 'credential',
          resourceId: toPublicId('credential', row.id),
          spaceId: row.spaceId,
          details: { name: row.name, field: request.field, task_id: toPublicId('task', task.id) },
        });
      });
      return { ok: true, value };
    },
  };
}

/** The freshest pushed code, looking once a second for up to `waitMs`; null if none came. */
async function waitForCode(deps: TaskVaultDeps, credentialId: string, waitMs: number, signal: AbortSignal): Promise<string | null> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const code = await takeFreshestCode(deps.db, deps.secrets, credentialId);
    if (code !== null || Date.now() >= deadline) return code;
    // An aborted run (cancel, timeout, shutdown) stops waiting; the agent turns the abort into its outcome.
    await sleep(Math.min(CODE_POLL_MS, Math.max(0, deadline - Date.now())), undefined, { signal });
  }
}
