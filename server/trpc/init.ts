import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { apiErrorShape } from './api-error-shape';
import type { Context } from './context';
import type { CallerRule } from '../http/resolve-caller';

/**
 * A REST route's success status when it is not 200 (the spec's 201/202/204), and who may
 * call it, in the raw routes' terms: set by the procedure factories (procedures.ts), so
 * the OpenAPI document lists each route's 401/403/429 from what enforces them.
 */
export type Meta = OpenApiMeta<{ successStatus?: 201 | 202 | 204; caller?: CallerRule }>;

/** One tRPC instance for /v1 and the operator console's API, with one error conversion. */
export const t = initTRPC.context<Context>().meta<Meta>().create({
  errorFormatter: ({ error }) => apiErrorShape(error),
});

export const router = t.router;
export const publicProcedure = t.procedure;
