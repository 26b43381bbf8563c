// The functions the driver runs in a page: the entry of the page bundle
// (../in-page-scripts.ts), which gives each one to puppeteer. They run in the page's
// main world, one frame at a time; arguments and results cross as JSON or as handles.
import { labelText, labelledByText, nameOf, roleOf, valueOf } from './accessibility.js';
import {
  NAME_LIMIT,
  REF_ATTRIBUTE,
  VALUE_LIMIT,
  type FramePlacement,
  type ObservedElement,
  type RankedMatch,
  type StorageItem,
  type TextOfResult,
} from './contract.js';
import {
  FIELD_SELECTOR,
  INTERACTIVE_SELECTOR,
  bySelector,
  deepQueryAll,
  htmlPropertiesOf,
  inViewport,
  isHtmlTag,
  isVisible,
  tagOf,
} from './dom-query.js';
import { renderedText } from './rendered-text.js';
import { bestTextMatch, clamp, normalize } from './text-match.js';

export { endClickGuard, guardClick } from './click-guard.js';
export { clickPoint } from './click-point.js';
export { installSteadyCaret } from './steady-caret.js';

/**
 * Lists the document's interactive elements and marks each with its ref, local to this
 * document: the driver numbers elements across frames.
 */
export function observe({ limit }: { limit: number }): ObservedElement[] {
  for (const el of deepQueryAll(`[${REF_ATTRIBUTE}]`)) {
    el.removeAttribute(REF_ATTRIBUTE);
  }
  const visible = deepQueryAll(INTERACTIVE_SELECTOR).filter(isVisible);
  // Over the limit, what the user currently sees wins; the list stays in document order.
  const chosen = new Set(
    [...visible.filter(inViewport), ...visible.filter((el) => !inViewport(el))].slice(0, limit),
  );
  return visible
    .filter((el) => chosen.has(el))
    .map((el, index) => {
      const ref = index + 1;
      el.setAttribute(REF_ATTRIBUTE, String(ref));
      const element: ObservedElement = {
        ref,
        role: roleOf(el),
        name: clamp(nameOf(el), NAME_LIMIT),
        tag: tagOf(el),
        inViewport: inViewport(el),
      };
      const value = valueOf(el);
      if (value !== undefined) element.value = clamp(value, VALUE_LIMIT);
      return element;
    });
}

/** Element marked with a local ref by the last observation, or null. */
export function findByRef({ ref }: { ref: number }): Element | null {
  return deepQueryAll(`[${REF_ATTRIBUTE}="${Number(ref)}"]`)[0] || null;
}

/**
 * Element a click on a string target means, ranked (see RankedMatch). A valid, matching
 * CSS selector wins; otherwise visible text over interactive elements and labels; as a
 * last resort the smallest visible element with that text (pages make divs clickable
 * with script handlers).
 */
export function findClickTarget({ target }: { target: string }): RankedMatch {
  const selected = selectorMatch(target);
  if (selected) return selected;
  const wanted = normalize(target);
  if (!wanted) return null;
  const clickable = deepQueryAll(`${INTERACTIVE_SELECTOR},label`)
    .filter(isVisible)
    .map((el) => ({
      element: el,
      texts: [
        nameOf(el),
        renderedText(el),
        el.getAttribute('aria-label'),
        el.getAttribute('title'),
        isHtmlTag(el, 'input') ? el.value : '',
      ],
    }));
  const interactive = bestTextMatch(clickable, wanted, false);
  if (interactive) return { element: interactive.element, rank: 1 + interactive.rank };
  const anyElement = (document.body ? deepQueryAll('*', document.body) : [])
    .filter((el) => !['script', 'style', 'noscript'].includes(tagOf(el)) && isVisible(el))
    .map((el) => ({ element: el, texts: [renderedText(el)] }));
  const other = bestTextMatch(anyElement, wanted, true);
  return other && { element: other.element, rank: 4 + other.rank };
}

/**
 * Form field a string target names, ranked (see RankedMatch). A valid, matching CSS
 * selector wins; otherwise the field's label (via for= or nesting, both exposed as
 * el.labels), aria-label / aria-labelledby, placeholder, name or id, compared like
 * visible text.
 */
export function findField({ target }: { target: string }): RankedMatch {
  const selected = selectorMatch(target);
  if (selected) return selected;
  const wanted = normalize(target);
  if (!wanted) return null;
  const fields = deepQueryAll(FIELD_SELECTOR)
    .filter(isVisible)
    .map((el) => ({
      element: el,
      texts: [
        labelText(el),
        el.getAttribute('aria-label'),
        labelledByText(el),
        el.getAttribute('placeholder'),
        el.getAttribute('name'),
        el.id,
        el.getAttribute('title'),
      ],
    }));
  const field = bestTextMatch(fields, wanted, false);
  return field && { element: field.element, rank: 1 + field.rank };
}

/**
 * What a target read as a CSS selector matches, ranked 0: the first visible match, else
 * the first match. Null when the target is not a valid selector or matches nothing.
 */
function selectorMatch(target: string): RankedMatch {
  const matches = bySelector(target) ?? [];
  const [first] = matches;
  return first === undefined ? null : { element: matches.find(isVisible) ?? first, rank: 0 };
}

/**
 * Gets a field ready to be typed into, in one call to the page (each is a round trip): a
 * <select> is left as it is ('select': the driver chooses one of its options instead);
 * any other field is emptied, its value masked when a secret is typed, and focused.
 */
export function prepareField(element: Element, secret: boolean): 'select' | 'ready' {
  if (isHtmlTag(element, 'select')) return 'select';
  clearField(element);
  if (secret) maskField(element);
  // What puppeteer's ElementHandle.focus() does.
  if (!(element instanceof HTMLElement)) throw new Error('Cannot focus non-HTMLElement');
  element.focus();
  return 'ready';
}

/**
 * Empties a text field before typing, through the native value setter so frameworks
 * that track values (React) see the change. Toggles and file inputs are left alone.
 */
function clearField(element: Element): void {
  if (htmlPropertiesOf(element).isContentEditable) {
    element.textContent = '';
  } else if (isHtmlTag(element, 'textarea')) {
    nativeValueSetter(HTMLTextAreaElement.prototype).call(element, '');
  } else if (isHtmlTag(element, 'input') && !['checkbox', 'radio', 'file'].includes(element.type)) {
    nativeValueSetter(HTMLInputElement.prototype).call(element, '');
  } else {
    return;
  }
  element.dispatchEvent(new Event('input', { bubbles: true }));
}

/** The `value` setter of the element class itself, past any a framework put on the instance. */
function nativeValueSetter(prototype: HTMLInputElement | HTMLTextAreaElement): (this: Element, value: string) => void {
  const setter = Object.getOwnPropertyDescriptor(prototype, 'value')?.set;
  if (setter === undefined) throw new Error('the page removed the native value setter');
  return setter;
}

/**
 * Selects the option of a <select> whose text or value matches, exact before
 * case-insensitive before contains. Returns whether an option was chosen; the driver
 * asks only after prepareField() answered 'select'.
 */
export function selectOption(element: Element, wanted: string): boolean {
  if (!isHtmlTag(element, 'select')) return false;
  const target = normalize(wanted);
  const lower = target.toLowerCase();
  const options = Array.from(element.options);
  const tests = [
    (text: string) => text === target,
    (text: string) => text.toLowerCase() === lower,
    (text: string) => text.toLowerCase().includes(lower),
  ];
  for (const test of tests) {
    const option = options.find((o) => test(normalize(o.text)) || test(normalize(o.value)));
    if (option) {
      element.value = option.value;
      element.dispatchEvent(new Event('input', { bubbles: true }));
      element.dispatchEvent(new Event('change', { bubbles: true }));
      return true;
    }
  }
  return false;
}

/** Clicks through the DOM when there is no clickable point (covered, zero-size). */
export function domClick(element: Element): void {
  // Only HTML elements have click(); on any other the call throws and the click fails.
  (element as HTMLElement).click();
}

/** Rendered text of the first element matching a selector, open shadow roots included. */
export function textOf({ selector }: { selector: string }): TextOfResult {
  const matches = bySelector(selector);
  if (matches === null) return { kind: 'invalid' };
  const [first] = matches;
  if (first === undefined) return { kind: 'missing' };
  return { kind: 'text', text: renderedText(first) };
}

/** Rendered text of every element matching a selector (at most `limit`), or null for an invalid selector. */
export function textsOf({ selector, limit }: { selector: string; limit: number }): string[] | null {
  const matches = bySelector(selector);
  return matches === null ? null : matches.slice(0, limit).map((element) => renderedText(element).trim());
}

/**
 * Masks a text field's value with discs, as a password input shows it (for typing a
 * secret), until the field is emptied: then it holds the secret no more (a person cleared
 * it in the live view, or the agent types something else, which clears it first), and
 * what is typed next shows as typed.
 */
function maskField(element: Element): void {
  if (!(element instanceof HTMLElement) || (element instanceof HTMLInputElement && element.type === 'password')) return;
  element.style.setProperty('-webkit-text-security', 'disc', 'important');
  const unmaskWhenEmptied = (): void => {
    const text = element instanceof HTMLInputElement || element instanceof HTMLTextAreaElement ? element.value : (element.textContent ?? '');
    if (text !== '') return;
    element.style.removeProperty('-webkit-text-security');
    element.removeEventListener('input', unmaskWhenEmptied);
  };
  element.addEventListener('input', unmaskWhenEmptied);
}

/** Whether the document's rendered text contains `text`, ignoring case and spacing. */
export function hasText({ text }: { text: string }): boolean {
  const needle = normalize(text).toLowerCase();
  return Boolean(document.body) && normalize(renderedText(document.body)).toLowerCase().includes(needle);
}

/**
 * Where an iframe element shows its frame: 'hidden' when the frame cannot be seen at all
 * (then neither can anything inside it, whatever its own document says).
 */
export function framePlacement(element: Element): FramePlacement {
  if (!isVisible(element)) return 'hidden';
  return inViewport(element) ? 'inViewport' : 'offscreen';
}

export function scroll({ direction }: { direction: 1 | -1 }): void {
  window.scrollBy({ top: direction * window.innerHeight * 0.8, behavior: 'instant' });
}

/**
 * Installed in every document: the agent drives a single page, so links and
 * window.open() that would open a new tab navigate the current page instead. That
 * keeps every navigation under the page's request interception (the domain allow-list).
 */
export function installSameTabNavigation(): void {
  const retarget = (event: Event): void => {
    const origin =
      event.target instanceof Element
        ? event.target.closest<HTMLAnchorElement | HTMLAreaElement | HTMLFormElement>('a[target], area[target], form[target]')
        : null;
    if (origin && origin.target !== '_self') origin.target = '_self';
  };
  document.addEventListener('click', retarget, true);
  document.addEventListener('submit', retarget, true);
  window.open = function (url?: string | URL | null): null {
    if (url !== undefined && url !== null && String(url) !== '') window.location.assign(String(url));
    return null;
  };
}

/** The origin's localStorage entries, for a device's saved state. */
export function readLocalStorage(): StorageItem[] {
  return Object.keys(localStorage).map((name) => ({ name, value: localStorage.getItem(name) ?? '' }));
}

/** Replaces the origin's localStorage with the given entries. */
export function writeLocalStorage({ items }: { items: StorageItem[] }): void {
  localStorage.clear();
  for (const item of items) localStorage.setItem(item.name, item.value);
}

export { fingerprintOf, locateFingerprint } from './fingerprint.js';
