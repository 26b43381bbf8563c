// Text PostgreSQL cannot store. A `text` or `jsonb` value refuses U+0000, and `jsonb` also
// refuses an unpaired UTF-16 surrogate (JSON.stringify writes it as a `\udXXX` escape);
// in a `text` column postgres.js would silently turn the surrogate into U+FFFD, so the row
// would not hold what was sent. Client input holding either is refused (400, naming the
// field); text the service reads from pages or models is cleaned before it is stored.

// Without the `u` flag the pattern walks UTF-16 code units, so it can see a surrogate
// that has no partner on the side it needs.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const REPLACEMENT = '\uFFFD';

export function isStorableText(text: string): boolean {
  return text.search(UNSTORABLE) === -1;
}

/** `text` with every NUL and unpaired surrogate replaced by U+FFFD. */
export function toStorableText(text: string): string {
  return isStorableText(text) ? text : text.replace(UNSTORABLE, REPLACEMENT);
}

/** A JSON value with every string in it, object keys included, made storable. */
export function toStorableJson<T>(value: T): T {
  if (typeof value === 'string') return toStorableText(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => toStorableJson(item)) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [toStorableText(key), toStorableJson(item)])) as T;
  }
  return value;
}

/** A value still to look at, linked to its parent so a path is built only when one is reported. */
interface Visit {
  value: unknown;
  parent: Visit | null;
  /** The key or index of `value` in its parent. */
  part: string | number | null;
}

/**
 * The path of the first string in `input` (depth first, in document order) that is not
 * storable, or of the first object key that is not: `["allowed_domains", 1]`. null when
 * everything is storable. Iterative and without copying paths, so a deeply nested body
 * can neither overflow the stack nor cost quadratic time.
 */
export function findUnstorableText(input: unknown): Array<string | number> | null {
  const pending: Visit[] = [{ value: input, parent: null, part: null }];
  for (let visit = pending.pop(); visit !== undefined; visit = pending.pop()) {
    const { value, part } = visit;
    // An object key is checked when its entry comes up, so keys and values are seen in document order.
    if ((typeof part === 'string' && !isStorableText(part)) || (typeof value === 'string' && !isStorableText(value))) return pathOf(visit);
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index -= 1) pending.push({ value: value[index], parent: visit, part: index });
    } else if (typeof value === 'object' && value !== null) {
      const entries = Object.entries(value);
      for (let index = entries.length - 1; index >= 0; index -= 1) {
        const [key, item] = entries[index]!;
        pending.push({ value: item, parent: visit, part: key });
      }
    }
  }
  return null;
}

function pathOf(visit: Visit): Array<string | number> {
  const path: Array<string | number> = [];
  for (let at: Visit | null = visit; at !== null && at.part !== null; at = at.parent) path.push(at.part);
  return path.reverse();
}

/**
 * The first field of a request's input whose text cannot be stored, as the 400 that
 * refuses it names it: `param` is the path's parts joined by dots, as validation errors
 * name fields (`allowed_domains.1`); a key that is itself the bad text is shown cleaned,
 * so the error never carries the character it refuses. null when all of it is storable.
 */
export function unstorableInput(input: unknown): { param: string; message: string } | null {
  const path = findUnstorableText(input);
  if (path === null) return null;
  const param = path.map((part) => toStorableText(String(part))).join('.');
  return { param, message: `Invalid value for ${param}: text must not contain NUL characters or unpaired UTF-16 surrogates.` };
}
