import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { apiErrorShape } from './api-error-shape';
import type { Context } from './context';

/** Success status of a REST route when it is not 200 (the spec's 201/202/204). */
export type Meta = OpenApiMeta<{ successStatus?: 201 | 202 | 204 }>;

/** One tRPC instance for /v1 and the operator console's API, with one error conversion. */
export const t = initTRPC.context<Context>().meta<Meta>().create({
  errorFormatter: ({ error }) => apiErrorShape(error),
});

export const router = t.router;
export const publicProcedure = t.procedure;
