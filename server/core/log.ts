import { DrizzleQueryError } from 'drizzle-orm';
import pino from 'pino';
import postgres from 'postgres';

// API keys look like svc_operator_<env>_<key_id>_<secret> and console keys like
// svc_console_<key_id>_<secret>; logs keep the key id (useful for support) and mask the
// secret. Webhook secrets, session tokens (also as a subprotocol), escalation bearers and
// console sign-in tokens, the secrets of CDP URLs (`cdptok_`, in the URL's query) and the
// MCP authorization server's codes, tokens and client secrets (`mcpat_`, `mcprt_`,
// `mcpcode_`, `mcpcs_`) are masked whole. Applied to every string that reaches the logger.
const KEY_PATTERN = /\b(svc_(?:operator_(?:live|test)|console)_[a-z2-7]{12})_[A-Za-z0-9-]{43}\b/g;
const OTHER_SECRET_PATTERNS = [/\bwhsec_[A-Za-z0-9_-]+/g, /\b(svc\.token\.)[A-Za-z0-9_-]+/g, /\b(sestok_|esctok_|constok_|cdptok_)[A-Za-z0-9_-]+/g, /\b(mcpat_|mcprt_|mcpcode_|mcpcs_)[A-Za-z0-9_-]+/g];

export function maskSecrets(text: string): string {
  let masked = text.replace(KEY_PATTERN, '$1_****');
  for (const pattern of OTHER_SECRET_PATTERNS) {
    masked = masked.replace(pattern, (match, prefix: unknown) => `${typeof prefix === 'string' ? prefix : match.slice(0, 6)}****`);
  }
  return masked;
}

// Database errors carry what no log line may hold. postgres.js attaches a failed query's
// statement and parameters to its error (`query`, `parameters`, `args`, `types`);
// PostgreSQL's `detail`, `where` and `internal_query` quote row values, and so do the
// messages of its data exceptions (SQLSTATE class 22: `invalid input syntax for type
// uuid: "…"`); drizzle wraps the error in a DrizzleQueryError whose message is the
// statement followed by its parameters, and an error wrapping that one (tRPC's) copies
// the message. The `err` serializer leaves all of that out of every error of the chain;
// the classes, SQLSTATE, routine, names of the table, column or constraint, and stacks
// still say what failed and where.
const DATABASE_TEXT_FIELDS = new Set(['query', 'params', 'parameters', 'args', 'types', 'detail', 'where', 'internal_query']);

export function serializeError(error: unknown): unknown {
  return pino.stdSerializers.err(error instanceof Error ? withoutDatabaseText(error) : (error as Error));
}

/** A copy of `error` and the errors it wraps without query text, parameters or row values. */
function withoutDatabaseText(error: Error): Error {
  const unsafe = new Map<string, string>();
  for (const inner of chainOf(error)) {
    if (inner instanceof DrizzleQueryError) unsafe.set(inner.message, 'Failed query');
    else if (inner instanceof postgres.PostgresError && inner.code.startsWith('22')) unsafe.set(inner.message, `data exception ${inner.code} in ${inner.routine}`);
  }
  const clean = (text: string) => [...unsafe].reduce((cleaned, [bad, safe]) => cleaned.replaceAll(bad, () => safe), text);
  const copies = new Map<Error, Error>();
  const copyOf = (original: Error): Error => {
    const known = copies.get(original);
    if (known !== undefined) return known;
    const copy: Error = Object.create(Object.getPrototypeOf(original) as object);
    copies.set(original, copy);
    for (const [key, value] of Object.entries(original)) {
      if (!DATABASE_TEXT_FIELDS.has(key)) (copy as unknown as Record<string, unknown>)[key] = typeof value === 'string' ? clean(value) : value;
    }
    const { errors } = original as Partial<AggregateError>;
    Object.defineProperties(copy, {
      message: { value: clean(original.message), writable: true, configurable: true },
      stack: { value: original.stack === undefined ? undefined : clean(original.stack), writable: true, configurable: true },
      cause: { value: original.cause instanceof Error ? copyOf(original.cause) : original.cause, writable: true, configurable: true },
      ...(Array.isArray(errors) ? { errors: { value: errors.map((inner: unknown) => (inner instanceof Error ? copyOf(inner) : inner)) } } : {}),
    });
    return copy;
  };
  return copyOf(error);
}

/** `error` and every error it wraps (causes, aggregated errors), each once. */
function chainOf(error: Error): Set<Error> {
  const chain = new Set<Error>();
  const pending: Error[] = [error];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (chain.has(next)) continue;
    chain.add(next);
    const wrapped: unknown[] = [next.cause, ...((next as Partial<AggregateError>).errors ?? [])];
    pending.push(...wrapped.filter((inner): inner is Error => inner instanceof Error));
  }
  return chain;
}

/** JSON lines to stdout, or to `destination` (tests read what was logged). */
export function createLogger(level: string, destination?: pino.DestinationStream) {
  return pino({
    level,
    base: undefined,
    serializers: { err: serializeError },
    redact: {
      paths: ['req.headers.authorization', 'req.headers["sec-websocket-protocol"]', 'headers.authorization', '*.secret', '*.token', '*.session_token'],
      censor: '****',
    },
    hooks: {
      logMethod(args, method) {
        // pino would take a bare error's own message as the line's `msg`: the error goes
        // through the serializer instead, and its cleaned message is the line's.
        const [first, ...rest] = args;
        const withError = first instanceof Error && typeof rest[0] !== 'string' ? [{ err: first }, withoutDatabaseText(first).message, ...rest] : args;
        const maskedArgs = withError.map((arg) => (typeof arg === 'string' ? maskSecrets(arg) : arg)) as Parameters<typeof method>;
        method.apply(this, maskedArgs);
      },
      // The finished line once more, so a secret inside a logged object (an error's
      // message quoting a URL, a field) is masked too.
      streamWrite: (line) => maskSecrets(line),
    },
  }, destination);
}

export type Logger = ReturnType<typeof createLogger>;
