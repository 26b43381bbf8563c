import { ActionError, type ActionErrorCode, type DownloadedFile, type DownloadLimits, type PageDriver, type PageObservation } from '../browser/types';
import { toStorableJson, toStorableText } from '../core/storable-text';
import type { AgentAction, HelpRequest } from './agent-action';
import { confirmationNeeded, CONFIRM_REQUEST_ACTION } from './confirm-before';
import { readPageValue, type PageValueReader } from './page-values';
import { CORRECTION_TEXTS, correctionAction, type CorrectionReason } from './correction';
import { ACTION_ERROR_FAILURES, FAILURE_DETAILS, type FailureCode } from './failures';
import { Interrupted, Interruption } from './interruption';
import type { JsonValue } from './json-value';
import type { AgentOutcome } from './outcome';
import type { ModelCallUsage } from './model-usage';
import { PlannerError, type Planner } from './planner';
import { RepeatedActionCounter, REPEATS_BEFORE_WARNING } from './repeated-action';
import type { CachedStep } from './replay/cached-step';
import type { NewStep, RecordedStep } from './step';
import { clampNote, describeAction, describeAnswer } from './step-text';
import { parseVaultPlaceholder, VAULT_CODE_FIELD, type Vault, type VaultEntry, type VaultPlaceholder, type VaultRefusal } from './vault-fill';

export interface AgentTask {
  id: string;
  prompt: string;
  /** Cap on `action` steps, resumed ones included; null means unbounded. */
  maxSteps: number | null;
  /** null or [] means unrestricted. */
  allowedDomains: string[] | null;
  /** The task's output_schema and its compiled check; a result must pass it to succeed. */
  output: { schema: object; validate: (value: JsonValue) => boolean } | null;
  /** Phrases or selectors of steps a human must confirm first (confirm-before.ts); null for none. */
  confirmBefore: string[] | null;
}

export interface RunAgentInput {
  task: AgentTask;
  driver: PageDriver;
  planner: Planner;
  /** Steps already recorded for this task (resuming after a crash or a human's answer). */
  history: readonly RecordedStep[];
  /** Persists one step; the caller adds seq, task_id and created_at. */
  recordStep: (step: NewStep) => Promise<void>;
  /** Adds one model request's tokens to the task's usage; called before its step is recorded. */
  recordModelCall: (usage: ModelCallUsage) => Promise<void>;
  /**
   * Credentials a human gave for this task, by field, held only here: a `type` whose text is
   * `{{field}}` types the value (masked on the page) and uses it up.
   */
  credentials?: Map<string, string>;
  /**
   * The credential vault of the task's Space: a `type` whose text is `{{vault:<name>.<field>}}`
   * fills from it (vault-fill.ts). Absent: such a type fails with credential_not_found.
   */
  vault?: Vault;
  /** Aborting it cancels the run; runAgent then returns `canceled` at once. */
  signal: AbortSignal;
  /** Epoch milliseconds at which the task times out. */
  deadline: number;
  /** Where `download` actions put their files; absent: a download fails with download_failed. */
  downloads?: TaskDownloads;
}

/** The task runner's side of `download`: what the task may still keep, and keeping a file. */
export interface TaskDownloads {
  limits(): Promise<DownloadLimits>;
  /** Stores the file and removes it (and its folder) from the browser's downloads. */
  keep(file: DownloadedFile): Promise<void>;
}


/**
 * Page action failures a model can plan around (another element, another URL); the others
 * (policy refusals, a dead browser, a timed-out wait) end the task as before.
 */
const CORRECTABLE_ACTION_ERRORS: Partial<Record<ActionErrorCode, CorrectionReason>> = {
  target_not_found: 'element_not_found',
  navigation_failed: 'navigation_failed',
};

/**
 * Bad replies in a row at the end of a resumed history. The loop warning is not a bad
 * reply: it follows an action that was carried out.
 */
function trailingCorrections(history: readonly RecordedStep[]): number {
  let count = 0;
  for (const step of history) {
    if (step.type !== 'correction') count = 0;
    else if (step.action !== correctionAction('repeated_action')) count += 1;
  }
  return count;
}

/** A fill the vault refused; the run ends with its failure code, or asks a human for an unpushed code. */
class VaultRefused extends Error {
  constructor(
    readonly refusal: VaultRefusal,
    readonly placeholder: VaultPlaceholder,
  ) {
    super(`vault fill refused: ${refusal}`);
    this.name = 'VaultRefused';
  }
}

/** What a typed credential shows as wherever a page echoed it back. */
const SECRET_MASK = '********';

/** Longest a single `wait for` may wait, deadline permitting. */
export const WAIT_FOR_TEXT_TIMEOUT_MS = 15_000;

/**
 * Runs a task on one page: observe → plan → act → record, until the planner finishes, asks a
 * human, or something fails. Every way a run can end is an outcome; runAgent throws only on
 * the unexpected (a bug, an untyped driver error, a failing `recordStep`), which the caller
 * reports as `internal_error`.
 *
 * Steps (see step.ts): each carried-out decision is one `action` step; the final answer, a
 * question for a human and a failure are `message` steps. A cancel records nothing.
 *
 * With a planner that takes corrections (the model planner), a reply it rejects and a page
 * action that failed in a way the model can fix become a `correction` step and the planner
 * is asked again, up to `maxCorrections` in a row; the next fails the task (`planner_error`,
 * or the failed action's own code). The same action on an unchanged page a third time in a
 * row gets a `correction` warning; a fourth fails the task with `agent_loop`.
 */
export async function runAgent(input: RunAgentInput): Promise<AgentOutcome> {
  const run = new AgentRun(input);
  try {
    return await run.loop();
  } catch (error) {
    return await run.endWith(error);
  } finally {
    run.dispose();
  }
}

class AgentRun {
  readonly #input: RunAgentInput;
  readonly #interruption: Interruption;
  readonly #history: NewStep[];
  #actionsTaken: number;
  /** Corrections since the last step that was not one (a resumed run continues the count). */
  #correctionsInARow: number;
  readonly #repeats = new RepeatedActionCounter();
  /** Credentials this run typed: masked out of everything it records or returns afterwards. */
  readonly #typedSecrets: string[] = [];
  /** The page as last observed; message steps are stamped with it. */
  #page: PageObservation | null = null;

  constructor(input: RunAgentInput) {
    this.#input = input;
    this.#interruption = new Interruption(input.signal, input.deadline);
    this.#history = [...input.history];
    this.#actionsTaken = input.history.filter((step) => step.type === 'action').length;
    this.#correctionsInARow = trailingCorrections(input.history);
  }

  async loop(): Promise<AgentOutcome> {
    const { task, driver, planner } = this.#input;
    const guard = <T>(work: () => Promise<T>): Promise<T> => this.#interruption.guard(work);
    // The run's first round trips (the page's and the database's) go at once: none needs another's answer.
    const [, vaultEntries, observed] = await Promise.all([
      guard(() => driver.setAllowedDomains(task.allowedDomains)),
      // Names and domains only, read once per run: what a model may know of the vault.
      this.#input.vault === undefined ? ([] as readonly VaultEntry[]) : guard(() => this.#input.vault!.entries()),
      this.#observe(),
    ]);
    let page = observed;

    for (;;) {
      const reply = await guard(() =>
        planner.next({
          prompt: task.prompt,
          observation: page,
          history: this.#history,
          signal: this.#interruption.signal,
          outputSchema: task.output?.schema ?? null,
          confirmBefore: task.confirmBefore,
          vaultEntries,
        }),
      );
      if (reply.usage !== undefined) await this.#input.recordModelCall(reply.usage);
      if ('rejected' in reply) {
        if (!this.#mayCorrect()) return this.#fail('planner_error');
        await this.#correct(reply.rejected);
        continue;
      }
      const { action } = reply;
      if (action.kind === 'finish') {
        const finished = await this.#finishWith(action.answer, reply.cache?.step);
        if (finished !== null) return finished;
        continue;
      }
      // Checked after planning so a planner may still finish on the last allowed step.
      if (task.maxSteps !== null && this.#actionsTaken >= task.maxSteps) return this.#fail('max_steps_exceeded');

      const before = page;
      // A replayed step says what the step it repeats said (its target is now a marker selector).
      const replayed = reply.cache?.replayed === true ? reply.cache.step : null;
      const described = replayed?.described ?? describeAction(action, before);
      // A step the task marks as consequential waits for a human's yes (a no fails the task).
      if (confirmationNeeded(task.confirmBefore, action, before, this.#history, described)) {
        await this.#message(CONFIRM_REQUEST_ACTION, described);
        return { status: 'needs_human', question: `Confirm before the agent continues: ${clampNote(described)}`, help: 'confirm' };
      }
      const repeats = planner.maxCorrections > 0 ? this.#repeats.see(described, before) : 0;
      if (repeats > REPEATS_BEFORE_WARNING) return this.#fail('agent_loop');

      let extracted: JsonValue;
      try {
        extracted = await this.#perform(action);
      } catch (error) {
        const reason = error instanceof ActionError ? CORRECTABLE_ACTION_ERRORS[error.code] : undefined;
        if (reason === undefined || this.#interruption.reason !== null || !this.#mayCorrect()) throw error;
        // A failed navigation may have left the page elsewhere; the model plans from where it is.
        page = await this.#observe();
        await this.#correct(reason);
        continue;
      }
      if (action.kind !== 'extract' && action.kind !== 'ask_human') page = await this.#observe();
      await this.#record({
        type: 'action',
        action: described,
        url: page.url,
        title: page.title,
        note: reply.note === null ? null : clampNote(reply.note),
        ...(reply.cache === undefined ? {} : { cache: reply.cache.step, replayed: reply.cache.replayed }),
      });
      this.#actionsTaken += 1;
      this.#correctionsInARow = 0;

      if (action.kind === 'extract') {
        const finished = await this.#finishWith(extracted);
        if (finished !== null) return finished;
        continue;
      }
      if (action.kind === 'ask_human') return this.#askHuman(action);
      if (repeats === REPEATS_BEFORE_WARNING) await this.#recordCorrection('repeated_action');
    }
  }

  /** Whether the planner may be corrected once more; if not, the task fails instead. */
  #mayCorrect(): boolean {
    return this.#correctionsInARow < this.#input.planner.maxCorrections;
  }

  /** Records a correction, which the planner sees in its history, and counts it. */
  async #correct(reason: CorrectionReason): Promise<void> {
    this.#correctionsInARow += 1;
    await this.#recordCorrection(reason);
  }

  async #recordCorrection(reason: CorrectionReason): Promise<void> {
    await this.#record({
      type: 'correction',
      action: correctionAction(reason),
      url: this.#page?.url ?? null,
      title: this.#page?.title ?? null,
      note: CORRECTION_TEXTS[reason],
    });
  }

  /** Turns what `loop` threw into an outcome; rethrows what no outcome describes. */
  async endWith(error: unknown): Promise<AgentOutcome> {
    // An action that failed because time ran out is a timeout, not an action failure.
    const interrupted = this.#interruption.reason ?? (error instanceof Interrupted ? error.reason : null);
    if (interrupted === 'canceled') return { status: 'canceled' };
    if (interrupted === 'timeout') return this.#fail('timeout');
    if (error instanceof ActionError) return this.#fail(ACTION_ERROR_FAILURES[error.code]);
    if (error instanceof PlannerError) return this.#fail(error.code);
    if (error instanceof VaultRefused) {
      if (error.refusal !== 'code_not_pushed') return this.#fail(error.refusal);
      // Nobody pushed the code in time: a person is asked for it, and the fill runs again with their answer.
      const { name } = error.placeholder;
      return this.#askHuman({ kind: 'ask_human', question: `Provide the one-time code for the credential "${name}"`, help: 'credentials', fields: [VAULT_CODE_FIELD] });
    }
    throw error;
  }

  dispose(): void {
    this.#interruption.dispose();
  }

  /** Carries out one action; returns the value an `extract` read (null for the rest). */
  async #perform(action: Exclude<AgentAction, { kind: 'finish' }>): Promise<JsonValue> {
    const { driver } = this.#input;
    const guard = <T>(work: () => Promise<T>): Promise<T> => this.#interruption.guard(work);
    switch (action.kind) {
      case 'navigate':
        await guard(() => driver.navigate(action.url));
        return null;
      case 'click':
        await guard(() => driver.click(action.target));
        return null;
      case 'type': {
        const placeholder = parseVaultPlaceholder(action.text);
        if (placeholder !== null) {
          await this.#fillFromVault(placeholder, action.into);
          return null;
        }
        const secret = this.#input.credentials === undefined ? null : takeCredential(this.#input.credentials, action.text);
        if (secret !== null) this.#typedSecrets.push(secret);
        if (secret !== null) await guard(() => driver.type(secret, action.into, { secret: true }));
        else await guard(() => driver.type(action.text, action.into));
        return null;
      }
      case 'press':
        await guard(() => driver.press(action.key));
        return null;
      case 'scroll':
        await guard(() => driver.scroll(action.direction));
        return null;
      case 'wait':
        await guard(() =>
          driver.waitForText(action.text, Math.min(WAIT_FOR_TEXT_TIMEOUT_MS, this.#interruption.remainingMs())),
        );
        return null;
      case 'extract': {
        const { source } = action;
        // Title and URL are read afresh: scripts may retitle the page after the observation the planner saw.
        const reader: PageValueReader = {
          page: async () => {
            const now = await this.#observe();
            return { title: now.title, url: now.url };
          },
          textOf: (selector) => guard(() => driver.textOf(selector)),
          textsOf: (selector) => guard(() => driver.textsOf(selector)),
        };
        if (source.of !== 'json') return await readPageValue(reader, source);
        const object: { [key: string]: JsonValue } = {};
        for (const field of source.fields) object[field.key] = await readPageValue(reader, field.source);
        return object;
      }
      case 'ask_human':
        // Nothing happens on the page; the run ends with the question once it is recorded.
        return null;
      case 'download': {
        const downloads = this.#input.downloads;
        if (downloads === undefined) throw new ActionError('download_failed', 'downloads are not kept for this run');
        const limits = await downloads.limits();
        const timeoutMs = Math.max(1, Math.min(limits.timeoutMs, this.#interruption.remainingMs()));
        const file = await guard(() => driver.download(action.target, { ...limits, timeoutMs }));
        await downloads.keep(file);
        return null;
      }
    }
  }

  /**
   * Types a vault value: fetched (a TOTP code computed) now, only if the top-level page as
   * it is now, not as the planner last saw it, is on one of the credential's domains;
   * otherwise nothing is typed. A secret value is masked on the page and out of everything
   * recorded afterwards.
   */
  async #fillFromVault(placeholder: VaultPlaceholder, into: Extract<AgentAction, { kind: 'type' }>['into']): Promise<void> {
    const { driver, vault, credentials } = this.#input;
    const guard = <T>(work: () => Promise<T>): Promise<T> => this.#interruption.guard(work);
    if (vault === undefined) throw new VaultRefused('credential_not_found', placeholder);
    const { url: pageUrl } = await this.#observe();
    const answeredCode = placeholder.field === 'code' ? (credentials?.get(VAULT_CODE_FIELD) ?? null) : null;
    const filled = await guard(() => vault.value({ ...placeholder, pageUrl, answeredCode }, this.#interruption.signal));
    if (!filled.ok) throw new VaultRefused(filled.refusal, placeholder);
    if (answeredCode !== null) credentials?.delete(VAULT_CODE_FIELD);
    // A username is no secret (the credential resource shows it): typed as it is, and left unmasked.
    const secret = placeholder.field !== 'username';
    if (secret) this.#typedSecrets.push(filled.value);
    await guard(() => driver.type(filled.value, into, { secret }));
  }

  async #observe(): Promise<PageObservation> {
    const { driver, planner } = this.#input;
    const observed = await this.#interruption.guard(() =>
      driver.observe({ screenshot: planner.wantsScreenshots, elements: planner.observesElements }),
    );
    // The planner (a model) reads the page too: a credential the page shows back is masked for it.
    // The screenshot's base64 is left whole: a short code could occur in it by chance, and
    // masking that would corrupt the image (the field itself is masked on the page).
    const { screenshot, ...text } = observed;
    const masked = this.#masked(text as unknown as JsonValue) as unknown as Omit<PageObservation, 'screenshot'>;
    const page: PageObservation = screenshot === undefined ? masked : { ...masked, screenshot };
    this.#page = page;
    return page;
  }

  /**
   * Every step leaves the agent through here, and holds text from the page (title, url,
   * extracted text) or from a model: what PostgreSQL cannot store (NUL, unpaired
   * surrogates) is replaced with U+FFFD first.
   */
  async #record(step: NewStep): Promise<void> {
    const storable = this.#masked(toStorableJson(step));
    await this.#input.recordStep(storable);
    this.#history.push(storable);
  }

  async #message(action: string, note: string): Promise<void> {
    await this.#record({ type: 'message', action, url: this.#page?.url ?? null, title: this.#page?.title ?? null, note });
  }

  /**
   * Ends the run with `answer`, unless the task has an output schema it does not match: then
   * a planner that takes corrections is told so and planning goes on (null), and one that
   * does not, or has used them up, fails the task with `output_invalid`.
   */
  async #finishWith(answer: JsonValue, cache?: CachedStep | null): Promise<AgentOutcome | null> {
    const output = this.#input.task.output;
    if (output !== null && !output.validate(answer)) {
      if (!this.#mayCorrect()) return this.#fail('output_invalid');
      await this.#correct('output_invalid');
      return null;
    }
    return this.#succeed(answer, cache);
  }

  // The result and the question are stored too (task result, escalation, audit, events),
  // so they are cleaned like steps.
  async #succeed(answer: JsonValue, cache?: CachedStep | null): Promise<AgentOutcome> {
    const result = this.#masked(toStorableJson(answer));
    // A run ended by `finish` keeps that decision with its answer step, for the cache entry.
    const url = this.#page?.url ?? null;
    const title = this.#page?.title ?? null;
    await this.#record({ type: 'message', action: 'answer', url, title, note: describeAnswer(result), ...(cache === undefined ? {} : { cache }) });
    return { status: 'succeeded', result };
  }

  /**
   * `value` with every credential this run typed replaced by a mask: a page may show it back
   * (a URL after a GET form, an echo in the page), and nothing recorded or returned may hold it.
   */
  #masked<T extends JsonValue | NewStep>(value: T): T {
    // Before anything was typed there is nothing to mask.
    if (this.#typedSecrets.length === 0) return value;
    const mask = (text: string) => this.#typedSecrets.reduce((masked, secret) => masked.replaceAll(secret, SECRET_MASK), text);
    const walk = (node: unknown): unknown => {
      if (typeof node === 'string') return mask(node);
      if (Array.isArray(node)) return node.map(walk);
      if (node !== null && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([key, inner]) => [mask(key), walk(inner)]));
      return node;
    };
    return walk(value) as T;
  }

  async #askHuman(action: Extract<AgentAction, { kind: 'ask_human' }>): Promise<AgentOutcome> {
    const { kind: _kind, question: asked, ...help } = action;
    const question = this.#masked(toStorableText(asked));
    await this.#message('ask_human', clampNote(question));
    return { status: 'needs_human', question, ...(toStorableJson(help) as HelpRequest) };
  }

  async #fail(code: FailureCode): Promise<AgentOutcome> {
    await this.#message(`failed ${code}`, FAILURE_DETAILS[code]);
    return { status: 'failed', error: code };
  }
}

/**
 * The credential a typed text names as `{{field}}` (the whole text), taken out of the run's
 * memory: each value is typed once.
 */
function takeCredential(credentials: Map<string, string>, text: string): string | null {
  const field = /^\{\{([A-Za-z][A-Za-z0-9_.-]{0,63})\}\}$/.exec(text)?.[1];
  if (field === undefined) return null;
  const value = credentials.get(field);
  if (value === undefined) return null;
  credentials.delete(field);
  return value;
}
