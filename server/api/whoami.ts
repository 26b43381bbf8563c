import { z } from 'zod';
import { whoami, WhoamiSchema } from '../domain/keys/whoami';
import { authedProcedure } from '../trpc/procedures';

export const getWhoami = authedProcedure
  .meta({ openapi: { method: 'GET', path: '/whoami', tags: ['whoami'], summary: 'Check the calling API key' } })
  .input(z.strictObject({}))
  .output(WhoamiSchema)
  .query(({ ctx }) => whoami(ctx.principal));
