/** A path segment as sent, percent-decoded; one that is not valid percent-encoding stays as sent (then it is no id: 404). */
export function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
