import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { Context } from './context';

/** Success status of a REST route when it is not 200 (the spec's 201/202/204). */
export type Meta = OpenApiMeta<{ successStatus?: 201 | 202 | 204 }>;

export const t = initTRPC.context<Context>().meta<Meta>().create({
  // Error bodies are written by the v1 handler in the CONTRACT.md shape; nothing from
  // tRPC's own shape (stack, path) may reach a client.
  errorFormatter: ({ shape }) => ({ message: shape.message, code: shape.code, data: {} }),
});

export const router = t.router;
export const publicProcedure = t.procedure;
