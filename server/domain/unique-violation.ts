// PostgreSQL's unique_violation SQLSTATE.
const UNIQUE_VIOLATION = '23505';

/** Whether `error` is a unique constraint's refusal; drizzle wraps the driver's error, so the SQLSTATE is on it or on its cause. */
export function isUniqueViolation(error: unknown): boolean {
  const codeOf = (value: unknown) => (typeof value === 'object' && value !== null && 'code' in value ? value.code : undefined);
  return codeOf(error) === UNIQUE_VIOLATION || (error instanceof Error && codeOf(error.cause) === UNIQUE_VIOLATION);
}
