import { initTRPC, type AnyTRPCProcedure } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiError, asApiError } from '../core/errors';
import { unwrapTrpcError } from './unwrap-trpc-error';

// What a procedure call throws, as tRPC delivers it, back in the error table's terms.
const t = initTRPC.create();

async function thrownBy(procedure: AnyTRPCProcedure, rawInput: unknown = {}): Promise<unknown> {
  try {
    await procedure({ ctx: {}, getRawInput: async () => rawInput, path: 'probe', type: 'query', signal: undefined, batchIndex: 0 });
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

describe('unwrapTrpcError', () => {
  it('gives back the ApiError a resolver or a middleware threw, with its status, param and headers', async () => {
    const thrown = new ApiError('rate_limited', { headers: { 'Retry-After': '3' } });
    const fromResolver = await thrownBy(
      t.procedure.query(() => {
        throw thrown;
      }),
    );
    const fromMiddleware = await thrownBy(
      t.procedure
        .use(() => {
          throw thrown;
        })
        .query(() => 'never'),
    );
    expect(unwrapTrpcError(fromResolver)).toBe(thrown);
    expect(unwrapTrpcError(fromMiddleware)).toBe(thrown);
  });

  it('turns input that fails the schema into invalid_request naming the field', async () => {
    const procedure = t.procedure.input(z.strictObject({ limit: z.number().int().max(100) })).query(() => 'never');
    expect(unwrapTrpcError(await thrownBy(procedure, { limit: 101 }))).toMatchObject({ apiCode: 'invalid_request', status: 400, param: 'limit' });
    expect(unwrapTrpcError(await thrownBy(procedure, { limit: 1, extra: true }))).toMatchObject({ apiCode: 'invalid_request', param: 'extra', message: 'Unknown parameter: extra.' });
  });

  it('leaves anything else to be answered as a fixed internal_error', async () => {
    const failure = new Error('connection reset by the database at 10.0.0.7');
    const unwrapped = unwrapTrpcError(
      await thrownBy(
        t.procedure.query(() => {
          throw failure;
        }),
      ),
    );
    const { apiError, unexpected } = asApiError(unwrapped);
    expect(unexpected).toBe(true);
    expect(apiError).toMatchObject({ apiCode: 'internal_error', status: 500, message: 'An internal error occurred.' });
  });
});
