/** RFC 3339, UTC, milliseconds: the one timestamp format on the wire. */
export function iso(date: Date): string {
  return date.toISOString();
}

export function isoOrNull(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}
