import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { apiErrorShape } from './api-error-shape';
import type { Context } from './context';

/**
 * Who may call a route, set by the procedure factories (procedures.ts) so the OpenAPI
 * document can list each route's 401/403/429 answers from the same place that enforces them.
 */
export interface AccessMeta {
  auth: 'api_key' | 'escalation_bearer';
  /** One of these scopes is needed; null means any valid key. */
  scopes: readonly string[] | null;
  /** The organization's product entitlement is checked too (writes). */
  write: boolean;
}

/** Success status of a REST route when it is not 200 (the spec's 201/202/204). */
export type Meta = OpenApiMeta<{ successStatus?: 201 | 202 | 204; access?: AccessMeta }>;

/** One tRPC instance for /v1 and the operator console's API, with one error conversion. */
export const t = initTRPC.context<Context>().meta<Meta>().create({
  errorFormatter: ({ error }) => apiErrorShape(error),
});

export const router = t.router;
export const publicProcedure = t.procedure;
