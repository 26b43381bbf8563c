import { z } from 'zod';
import { compileOutputSchema } from '../../agent/output-schema';
import { normalizeDomainEntry } from '../../browser';

/** CONTRACT.md: a prompt over 20,000 characters is 400 invalid_request with param `prompt`. */
export const PROMPT_MAX_CHARS = 20_000;
const INT32_MAX = 2 ** 31 - 1;
const MAX_ALLOWED_DOMAINS = 100;
const MAX_CONFIRM_BEFORE = 20;

/** Body of POST /v1/devices/{id}/tasks. */
export const SubmitTaskBodySchema = z.object({
  prompt: z
    .string()
    .max(PROMPT_MAX_CHARS)
    .refine((prompt) => prompt.trim() !== '', 'expected a non-empty prompt'),
  /**
   * Hostnames (an entry allows its subdomains); null or [] means unrestricted. Stored
   * normalized (lowercase bare host), so what is enforced is what was validated.
   */
  allowed_domains: z
    .array(
      z
        .string()
        .max(253)
        .refine((entry) => normalizeDomainEntry(entry) !== null, 'expected a hostname such as example.com'),
    )
    .max(MAX_ALLOWED_DOMAINS)
    .nullable()
    .optional(),
  /** Cap on the agent's action steps; null is effectively unbounded. */
  max_steps: z.number().int().min(1).max(INT32_MAX).nullable().optional(),
  /**
   * A JSON Schema (draft 2020-12 subset, at most 16 KiB) the result must match: the task
   * succeeds only with a result that does, else it fails with `output_invalid`.
   */
  output_schema: z
    .record(z.string(), z.json())
    .superRefine((schema, context) => {
      const compiled = compileOutputSchema(schema);
      if (!compiled.ok) context.addIssue({ code: 'custom', message: compiled.problem });
    })
    .nullable()
    .optional()
    .describe(
      'JSON Schema (draft 2020-12) of the result: type (object, array, string, number, integer, boolean, null), properties, required, additionalProperties, items, enum, const, nullable, min/max items, length and value, title, description. At most 16 KiB.',
    ),
  /**
   * Phrases or selectors of consequential steps (a purchase, a submit): before a click,
   * typing, key or navigation whose target contains one, the agent has a human confirm.
   */
  confirm_before: z.array(z.string().trim().min(1).max(200)).max(MAX_CONFIRM_BEFORE).nullable().optional(),
  /** What the task's escalations do when they expire unanswered: fail the task (default) or let it continue without an answer. */
  escalation_on_timeout: z.enum(['fail', 'continue']).optional(),
  /**
   * Replay cache key (docs/api.md "Task caches"): a success stores the run's steps under it in
   * the device's Space, and a later task with the same key and prompt replays them with no model call.
   */
  cache_key: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,200}$/, 'expected 1 to 200 characters of A-Z, a-z, 0-9, ".", "_", ":" and "-"')
    .optional()
    .describe('Replay cache key: 1 to 200 characters of A-Z, a-z, 0-9, ".", "_", ":" and "-".'),
});
export type SubmitTaskBody = z.infer<typeof SubmitTaskBodySchema>;

export function normalizedDomains(entries: readonly string[] | null | undefined): string[] | null {
  if (entries === null || entries === undefined || entries.length === 0) return null;
  return [...new Set(entries.map((entry) => normalizeDomainEntry(entry)!))];
}
