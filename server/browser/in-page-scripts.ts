// Code that runs inside the page. It is written as plain JavaScript source and turned
// into functions with `new Function` rather than written as TypeScript functions:
// puppeteer serializes page functions with toString(), and the TypeScript runners this
// service uses (tsx, vitest) may inject helpers such as __name() into compiled code,
// which do not exist in the page. The exported signatures type the boundary.

/** Attribute observe() puts on each listed element so `{ ref }` targets resolve. */
export const REF_ATTRIBUTE = 'data-operator-ref';

export const MAX_OBSERVED_ELEMENTS = 150;

const NAME_LIMIT = 80;
const VALUE_LIMIT = 200;

/** Shared helpers, prepended to every script below. */
const HELPERS = String.raw`
  const REF_ATTRIBUTE = ${JSON.stringify(REF_ATTRIBUTE)};
  const INTERACTIVE = [
    'a[href]', 'button', 'input:not([type=hidden])', 'select', 'textarea', 'summary',
    '[role=button]', '[role=link]', '[role=checkbox]', '[role=radio]', '[role=switch]',
    '[role=tab]', '[role=menuitem]', '[role=option]', '[role=textbox]', '[role=combobox]',
    '[role=searchbox]', '[contenteditable=""]', '[contenteditable=true]', '[onclick]',
    '[tabindex]:not([tabindex="-1"])',
  ].join(',');
  const FIELDS = [
    'input:not([type=hidden]):not([type=button]):not([type=submit]):not([type=reset]):not([type=image])',
    'textarea', 'select', '[contenteditable=""]', '[contenteditable=true]',
    '[role=textbox]', '[role=combobox]', '[role=searchbox]',
  ].join(',');
  const BUTTON_INPUT_TYPES = ['button', 'submit', 'reset', 'image'];

  const normalize = (text) => (text || '').replace(/\s+/g, ' ').trim();
  const clamp = (text, limit) => {
    const clean = normalize(text);
    return clean.length > limit ? clean.slice(0, limit - 1) + '…' : clean;
  };
  const isVisible = (el) => {
    const rect = el.getBoundingClientRect();
    if (rect.width === 0 && rect.height === 0) return false;
    return el.checkVisibility({ visibilityProperty: true });
  };
  const tagOf = (el) => el.tagName.toLowerCase();
  const inputType = (el) => (el.getAttribute('type') || 'text').toLowerCase();

  const roleOf = (el) => {
    const explicit = normalize(el.getAttribute('role'));
    if (explicit) return explicit.split(' ')[0];
    const tag = tagOf(el);
    if (tag === 'a') return 'link';
    if (tag === 'button' || tag === 'summary') return 'button';
    if (tag === 'select') return el.multiple ? 'listbox' : 'combobox';
    if (tag === 'textarea') return 'textbox';
    if (tag === 'input') {
      const type = inputType(el);
      if (BUTTON_INPUT_TYPES.includes(type)) return 'button';
      if (type === 'checkbox' || type === 'radio') return type;
      if (type === 'range') return 'slider';
      if (type === 'search') return 'searchbox';
      if (type === 'number') return 'spinbutton';
      return 'textbox';
    }
    if (el.isContentEditable) return 'textbox';
    return 'clickable';
  };

  const labelledByText = (el) => {
    const ids = normalize(el.getAttribute('aria-labelledby'));
    if (!ids) return '';
    return ids.split(' ')
      .map((id) => document.getElementById(id))
      .filter(Boolean)
      .map((labelEl) => labelEl.innerText || labelEl.textContent)
      .join(' ');
  };
  const labelText = (el) =>
    el.labels ? Array.from(el.labels).map((label) => label.innerText).join(' ') : '';
  const isFormField = (el) => ['input', 'select', 'textarea'].includes(tagOf(el));

  /** Accessible-name approximation, in the order ARIA computes it. */
  const nameOf = (el) => {
    const candidates = [el.getAttribute('aria-label'), labelledByText(el), labelText(el)];
    if (tagOf(el) === 'input' && BUTTON_INPUT_TYPES.includes(inputType(el))) {
      candidates.push(el.value, el.getAttribute('alt'));
    }
    if (!isFormField(el)) {
      candidates.push(el.innerText);
      const img = el.querySelector('img[alt]');
      if (img) candidates.push(img.getAttribute('alt'));
    }
    candidates.push(el.getAttribute('placeholder'), el.getAttribute('title'), el.getAttribute('name'));
    return normalize(candidates.find((text) => normalize(text) !== '') || '');
  };

  /** Current value of a form field; undefined for password fields and non-fields. */
  const valueOf = (el) => {
    const tag = tagOf(el);
    if (tag === 'select') {
      return Array.from(el.selectedOptions).map((option) => option.text).join(', ');
    }
    if (tag === 'textarea') return el.value;
    if (tag !== 'input') return undefined;
    const type = inputType(el);
    if (type === 'password' || BUTTON_INPUT_TYPES.includes(type)) return undefined;
    if (type === 'checkbox' || type === 'radio') return el.checked ? 'checked' : 'unchecked';
    return el.value;
  };

  /** Elements matching a CSS selector, or null when the string is not a valid selector. */
  const bySelector = (selector) => {
    try {
      return Array.from(document.querySelectorAll(selector));
    } catch {
      return null;
    }
  };

  /**
   * Best match of text among candidates, each with the texts it can be known by:
   * exact match first, then case-insensitive equality, then case-insensitive contains
   * (shortest text wins, so "Save" prefers "Save draft" over a whole paragraph).
   * With preferDeepest, ties go to the later candidate, which in document order is the
   * innermost of nested elements carrying the same text.
   */
  const bestTextMatch = (candidates, wanted, preferDeepest) => {
    const lower = wanted.toLowerCase();
    let best = null;
    for (const { el, texts } of candidates) {
      for (const raw of texts) {
        const text = normalize(raw);
        if (!text) continue;
        let rank;
        if (text === wanted) rank = 0;
        else if (text.toLowerCase() === lower) rank = 1;
        else if (text.toLowerCase().includes(lower)) rank = 2;
        else continue;
        const better = !best || rank < best.rank || (rank === best.rank &&
          (text.length < best.length || (preferDeepest && text.length === best.length)));
        if (better) {
          best = { el, rank, length: text.length };
        }
      }
    }
    return best ? best.el : null;
  };
`;

export interface ObservedElement {
  ref: number;
  role: string;
  name: string;
  tag: string;
  value?: string;
}

export type TextOfResult = { kind: 'text'; text: string } | { kind: 'invalid' } | { kind: 'missing' };

/** A page-level function taking one JSON-serializable argument object. */
function script<Args, Result>(body: string): (args: Args) => Result {
  return new Function('args', `${HELPERS}\n${body}`) as (args: Args) => Result;
}

/** A function puppeteer calls with an element handle as its first argument. */
function elementFunction<Args extends unknown[], Result>(
  body: string,
  ...params: string[]
): (element: Element, ...args: Args) => Result {
  return new Function('element', ...params, body) as (element: Element, ...args: Args) => Result;
}

/** Lists interactive elements and marks each with its ref. Args: { limit }. */
export const OBSERVE_SCRIPT = script<{ limit: number }, ObservedElement[]>(String.raw`
  for (const el of document.querySelectorAll('[' + REF_ATTRIBUTE + ']')) {
    el.removeAttribute(REF_ATTRIBUTE);
  }
  const visible = Array.from(document.querySelectorAll(INTERACTIVE)).filter(isVisible);
  const inViewport = (el) => {
    const rect = el.getBoundingClientRect();
    return rect.bottom > 0 && rect.right > 0 && rect.top < innerHeight && rect.left < innerWidth;
  };
  // Over the limit, what the user currently sees wins; the list stays in document order.
  const chosen = new Set(
    [...visible.filter(inViewport), ...visible.filter((el) => !inViewport(el))].slice(0, args.limit),
  );
  return visible.filter((el) => chosen.has(el)).map((el, index) => {
    const ref = index + 1;
    el.setAttribute(REF_ATTRIBUTE, String(ref));
    const element = { ref, role: roleOf(el), name: clamp(nameOf(el), ${NAME_LIMIT}), tag: tagOf(el) };
    const value = valueOf(el);
    if (value !== undefined) element.value = clamp(value, ${VALUE_LIMIT});
    return element;
  });
`);

/** Element marked with a ref by the last observation, or null. Args: { ref }. */
export const FIND_BY_REF_SCRIPT = script<{ ref: number }, Element | null>(String.raw`
  return document.querySelector('[' + REF_ATTRIBUTE + '="' + Number(args.ref) + '"]');
`);

/**
 * Element a click on a string target means, or null. Args: { target }.
 * A valid, matching CSS selector wins; otherwise visible text over interactive
 * elements and labels; as a last resort the smallest visible element with that text
 * (pages make divs clickable with script handlers).
 */
export const FIND_CLICK_TARGET_SCRIPT = script<{ target: string }, Element | null>(String.raw`
  const matches = bySelector(args.target);
  if (matches && matches.length > 0) return matches.find(isVisible) || matches[0];
  const wanted = normalize(args.target);
  if (!wanted) return null;
  const clickable = Array.from(document.querySelectorAll(INTERACTIVE + ',label'))
    .filter(isVisible)
    .map((el) => ({
      el,
      texts: [nameOf(el), el.innerText, el.getAttribute('aria-label'), el.getAttribute('title'),
        tagOf(el) === 'input' ? el.value : ''],
    }));
  const interactive = bestTextMatch(clickable, wanted, false);
  if (interactive) return interactive;
  const anyElement = Array.from(document.body ? document.body.querySelectorAll('*') : [])
    .filter((el) => !['script', 'style', 'noscript'].includes(tagOf(el)) && isVisible(el))
    .map((el) => ({ el, texts: [el.innerText] }));
  return bestTextMatch(anyElement, wanted, true);
`);

/**
 * Form field a string target names, or null. Args: { target }.
 * A valid, matching CSS selector wins; otherwise the field's label (via for= or
 * nesting, both exposed as el.labels), aria-label / aria-labelledby, placeholder,
 * name or id, compared like visible text.
 */
export const FIND_FIELD_SCRIPT = script<{ target: string }, Element | null>(String.raw`
  const matches = bySelector(args.target);
  if (matches && matches.length > 0) return matches.find(isVisible) || matches[0];
  const wanted = normalize(args.target);
  if (!wanted) return null;
  const fields = Array.from(document.querySelectorAll(FIELDS))
    .filter(isVisible)
    .map((el) => ({
      el,
      texts: [labelText(el), el.getAttribute('aria-label'), labelledByText(el),
        el.getAttribute('placeholder'), el.getAttribute('name'), el.id, el.getAttribute('title')],
    }));
  return bestTextMatch(fields, wanted, false);
`);

/**
 * Empties a text field before typing, through the native value setter so frameworks
 * that track values (React) see the change. Toggles and file inputs are left alone.
 */
export const CLEAR_FIELD_FUNCTION = elementFunction<[], void>(String.raw`
  if (element.isContentEditable) {
    element.textContent = '';
  } else if (element.tagName === 'TEXTAREA') {
    Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set.call(element, '');
  } else if (element.tagName === 'INPUT' && !['checkbox', 'radio', 'file'].includes(element.type)) {
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(element, '');
  } else {
    return;
  }
  element.dispatchEvent(new Event('input', { bubbles: true }));
`);

/**
 * Selects the option of a <select> whose text or value matches, exact before
 * case-insensitive before contains. Returns whether an option was chosen.
 */
export const SELECT_OPTION_FUNCTION = elementFunction<[string], boolean>(String.raw`
  const normalize = (text) => (text || '').replace(/\s+/g, ' ').trim();
  const target = normalize(wanted);
  const lower = target.toLowerCase();
  const options = Array.from(element.options);
  const tests = [
    (text) => text === target,
    (text) => text.toLowerCase() === lower,
    (text) => text.toLowerCase().includes(lower),
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
`, 'wanted');

export const TAG_NAME_FUNCTION = elementFunction<[], string>('return element.tagName.toLowerCase();');

/** Clicks through the DOM when there is no clickable point (covered, zero-size). */
export const DOM_CLICK_FUNCTION = elementFunction<[], void>('element.click();');

/** innerText of the first element matching args.selector. */
export const TEXT_OF_SCRIPT = script<{ selector: string }, TextOfResult>(String.raw`
  const matches = bySelector(args.selector);
  if (matches === null) return { kind: 'invalid' };
  if (matches.length === 0) return { kind: 'missing' };
  return { kind: 'text', text: matches[0].innerText };
`);

/** Truthy once the page's visible text contains args.text, ignoring case and spacing. */
export const HAS_TEXT_SCRIPT = script<{ text: string }, boolean>(String.raw`
  const needle = normalize(args.text).toLowerCase();
  return Boolean(document.body) && normalize(document.body.innerText).toLowerCase().includes(needle);
`);

export const SCROLL_SCRIPT = script<{ direction: 1 | -1 }, void>(String.raw`
  window.scrollBy({ top: args.direction * window.innerHeight * 0.8, behavior: 'instant' });
`);

/**
 * Installed in every document: the agent drives a single page, so links and
 * window.open() that would open a new tab navigate the current page instead. That
 * keeps every navigation under the page's request interception (the domain allow-list).
 */
export const SAME_TAB_NAVIGATION_SCRIPT = String.raw`(() => {
  const retarget = (event) => {
    const origin = event.target instanceof Element ? event.target.closest('a[target], area[target], form[target]') : null;
    if (origin && origin.target !== '_self') origin.target = '_self';
  };
  document.addEventListener('click', retarget, true);
  document.addEventListener('submit', retarget, true);
  window.open = function (url) {
    if (url !== undefined && url !== null && String(url) !== '') window.location.assign(String(url));
    return null;
  };
})();`;

