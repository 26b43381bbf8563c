import { z } from 'zod';
import { normalizeDomainEntry } from '../../browser';

/** CONTRACT.md: a prompt over 20,000 characters is 400 invalid_request with param `prompt`. */
export const PROMPT_MAX_CHARS = 20_000;
const INT32_MAX = 2 ** 31 - 1;
const MAX_ALLOWED_DOMAINS = 100;

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
});
export type SubmitTaskBody = z.infer<typeof SubmitTaskBodySchema>;

export function normalizedDomains(entries: readonly string[] | null | undefined): string[] | null {
  if (entries === null || entries === undefined || entries.length === 0) return null;
  return [...new Set(entries.map((entry) => normalizeDomainEntry(entry)!))];
}
