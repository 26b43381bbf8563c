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
  /** Within this document's viewport; an iframe's viewport is the iframe's box. */
  const inViewport = (el) => {
    const rect = el.getBoundingClientRect();
    return rect.bottom > 0 && rect.right > 0 && rect.top < innerHeight && rect.left < innerWidth;
  };
  const tagOf = (el) => el.tagName.toLowerCase();

  // Open shadow roots are searched like the light DOM. Closed ones stay out of reach:
  // the page holds the only reference to them.
  let openShadowRootList = null;
  /** Every open shadow root in the document, nested ones included; found once per run. */
  const openShadowRoots = () => {
    if (openShadowRootList === null) {
      openShadowRootList = [];
      const scopes = [document];
      while (scopes.length > 0) {
        for (const el of scopes.pop().querySelectorAll('*')) {
          if (el.shadowRoot) {
            openShadowRootList.push(el.shadowRoot);
            scopes.push(el.shadowRoot);
          }
        }
      }
    }
    return openShadowRootList;
  };

  /**
   * Elements under root matching a valid selector, inside open shadow roots too, in
   * document order with a host's shadow content right after the host. Pages without
   * shadow roots keep the native querySelectorAll, which is several times faster.
   */
  const deepQueryAll = (selector, root = document) => {
    if (openShadowRoots().length === 0) return Array.from(root.querySelectorAll(selector));
    const found = [];
    const visit = (scope) => {
      const walker = document.createTreeWalker(scope, NodeFilter.SHOW_ELEMENT);
      for (let el = walker.nextNode(); el; el = walker.nextNode()) {
        if (el.matches(selector)) found.push(el);
        if (el.shadowRoot) visit(el.shadowRoot);
      }
    };
    visit(root);
    return found;
  };

  let flatTreeBranchSet = null;
  /**
   * Shadow hosts, slots and everything above them up to the document, across shadow
   * boundaries: the elements whose innerText misses rendered text, since innerText
   * follows the light tree (it skips shadow content and what slots show).
   */
  const flatTreeBranches = () => {
    if (flatTreeBranchSet === null) {
      flatTreeBranchSet = new Set();
      const mark = (node) => {
        for (let n = node; n && !flatTreeBranchSet.has(n); n = n instanceof ShadowRoot ? n.host : n.parentNode) {
          flatTreeBranchSet.add(n);
        }
      };
      for (const root of openShadowRoots()) {
        mark(root.host);
        for (const slot of root.querySelectorAll('slot')) mark(slot);
      }
    }
    return flatTreeBranchSet;
  };

  /**
   * Text of an element as rendered. Branches holding shadow content or slots are walked
   * in flat-tree order; everything else is left to innerText.
   */
  const renderedText = (el) => {
    const branches = flatTreeBranches();
    if (!branches.has(el)) return el.innerText;
    const parts = [];
    const collect = (node) => {
      if (node.nodeType === Node.TEXT_NODE) {
        parts.push(node.data);
        return;
      }
      if (node.nodeType !== Node.ELEMENT_NODE) return;
      const display = getComputedStyle(node).display;
      if (display === 'none') return;
      const gap = display === 'inline' || display === 'contents' ? '' : ' ';
      parts.push(gap);
      if (branches.has(node)) {
        const children = node.shadowRoot ? node.shadowRoot.childNodes
          : tagOf(node) === 'slot' ? node.assignedNodes({ flatten: true }) : node.childNodes;
        for (const child of children) collect(child);
      } else {
        parts.push(node.innerText);
      }
      parts.push(gap);
    };
    collect(el);
    return normalize(parts.join(''));
  };
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
    // Ids are scoped to a shadow tree, so they resolve in the element's own root.
    const root = el.getRootNode();
    return ids.split(' ')
      .map((id) => root.getElementById(id))
      .filter(Boolean)
      .map((labelEl) => renderedText(labelEl) || labelEl.textContent)
      .join(' ');
  };
  const labelText = (el) =>
    el.labels ? Array.from(el.labels).map((label) => renderedText(label)).join(' ') : '';
  const isFormField = (el) => ['input', 'select', 'textarea'].includes(tagOf(el));

  /** Accessible-name approximation, in the order ARIA computes it. */
  const nameOf = (el) => {
    const candidates = [el.getAttribute('aria-label'), labelledByText(el), labelText(el)];
    if (tagOf(el) === 'input' && BUTTON_INPUT_TYPES.includes(inputType(el))) {
      candidates.push(el.value, el.getAttribute('alt'));
    }
    if (!isFormField(el)) {
      candidates.push(renderedText(el));
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

  /**
   * Elements matching a CSS selector, open shadow roots included (a selector does not
   * cross a shadow boundary itself), or null when the string is not a valid selector.
   */
  const bySelector = (selector) => {
    try {
      document.createDocumentFragment().querySelector(selector);
    } catch {
      return null;
    }
    return deepQueryAll(selector);
  };

  /**
   * Best match of text among candidates, each with the texts it can be known by, as
   * { element, rank } or null: rank 0 for an exact match, 1 for case-insensitive
   * equality, 2 for case-insensitive contains (shortest text wins, so "Save" prefers
   * "Save draft" over a whole paragraph). With preferDeepest, ties go to the later
   * candidate, which in document order is the innermost of nested elements carrying
   * the same text.
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
    return best ? { element: best.el, rank: best.rank } : null;
  };
`;

/** An element observe() listed in one frame; `ref` is local to that frame's document. */
export interface ObservedElement {
  ref: number;
  role: string;
  name: string;
  tag: string;
  value?: string;
  /** Inside the viewport of its own document. */
  inViewport: boolean;
}

/**
 * An element a string target found, with how well it matched: lower is better. 0 is a
 * CSS selector match; text matches follow, from exact to partial, interactive elements
 * and fields before any other element. Ranks compare across frames.
 */
export type RankedMatch = { element: Element; rank: number } | null;

/** Ranks up to this one are selector matches or whole-text matches on an interactive element or field. */
export const DECISIVE_MATCH_RANK = 2;

export type FramePlacement = 'hidden' | 'offscreen' | 'inViewport';

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

/**
 * Lists the document's interactive elements and marks each with its ref, local to this
 * document: the driver numbers elements across frames. Args: { limit }.
 */
export const OBSERVE_SCRIPT = script<{ limit: number }, ObservedElement[]>(String.raw`
  for (const el of deepQueryAll('[' + REF_ATTRIBUTE + ']')) {
    el.removeAttribute(REF_ATTRIBUTE);
  }
  const visible = deepQueryAll(INTERACTIVE).filter(isVisible);
  // Over the limit, what the user currently sees wins; the list stays in document order.
  const chosen = new Set(
    [...visible.filter(inViewport), ...visible.filter((el) => !inViewport(el))].slice(0, args.limit),
  );
  return visible.filter((el) => chosen.has(el)).map((el, index) => {
    const ref = index + 1;
    el.setAttribute(REF_ATTRIBUTE, String(ref));
    const element = {
      ref, role: roleOf(el), name: clamp(nameOf(el), ${NAME_LIMIT}), tag: tagOf(el), inViewport: inViewport(el),
    };
    const value = valueOf(el);
    if (value !== undefined) element.value = clamp(value, ${VALUE_LIMIT});
    return element;
  });
`);

/** Element marked with a local ref by the last observation, or null. Args: { ref }. */
export const FIND_BY_REF_SCRIPT = script<{ ref: number }, Element | null>(String.raw`
  return deepQueryAll('[' + REF_ATTRIBUTE + '="' + Number(args.ref) + '"]')[0] || null;
`);

/**
 * Element a click on a string target means, ranked (see RankedMatch). Args: { target }.
 * A valid, matching CSS selector wins; otherwise visible text over interactive
 * elements and labels; as a last resort the smallest visible element with that text
 * (pages make divs clickable with script handlers).
 */
export const FIND_CLICK_TARGET_SCRIPT = script<{ target: string }, RankedMatch>(String.raw`
  const matches = bySelector(args.target);
  if (matches && matches.length > 0) return { element: matches.find(isVisible) || matches[0], rank: 0 };
  const wanted = normalize(args.target);
  if (!wanted) return null;
  const clickable = deepQueryAll(INTERACTIVE + ',label')
    .filter(isVisible)
    .map((el) => ({
      el,
      texts: [nameOf(el), renderedText(el), el.getAttribute('aria-label'), el.getAttribute('title'),
        tagOf(el) === 'input' ? el.value : ''],
    }));
  const interactive = bestTextMatch(clickable, wanted, false);
  if (interactive) return { element: interactive.element, rank: 1 + interactive.rank };
  const anyElement = (document.body ? deepQueryAll('*', document.body) : [])
    .filter((el) => !['script', 'style', 'noscript'].includes(tagOf(el)) && isVisible(el))
    .map((el) => ({ el, texts: [renderedText(el)] }));
  const other = bestTextMatch(anyElement, wanted, true);
  return other && { element: other.element, rank: 4 + other.rank };
`);

/**
 * Form field a string target names, ranked (see RankedMatch). Args: { target }.
 * A valid, matching CSS selector wins; otherwise the field's label (via for= or
 * nesting, both exposed as el.labels), aria-label / aria-labelledby, placeholder,
 * name or id, compared like visible text.
 */
export const FIND_FIELD_SCRIPT = script<{ target: string }, RankedMatch>(String.raw`
  const matches = bySelector(args.target);
  if (matches && matches.length > 0) return { element: matches.find(isVisible) || matches[0], rank: 0 };
  const wanted = normalize(args.target);
  if (!wanted) return null;
  const fields = deepQueryAll(FIELDS)
    .filter(isVisible)
    .map((el) => ({
      el,
      texts: [labelText(el), el.getAttribute('aria-label'), labelledByText(el),
        el.getAttribute('placeholder'), el.getAttribute('name'), el.id, el.getAttribute('title')],
    }));
  const field = bestTextMatch(fields, wanted, false);
  return field && { element: field.element, rank: 1 + field.rank };
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

/** Rendered text of the first element matching args.selector, open shadow roots included. */
export const TEXT_OF_SCRIPT = script<{ selector: string }, TextOfResult>(String.raw`
  const matches = bySelector(args.selector);
  if (matches === null) return { kind: 'invalid' };
  if (matches.length === 0) return { kind: 'missing' };
  return { kind: 'text', text: renderedText(matches[0]) };
`);

/** Whether the document's rendered text contains args.text, ignoring case and spacing. */
export const HAS_TEXT_SCRIPT = script<{ text: string }, boolean>(String.raw`
  const needle = normalize(args.text).toLowerCase();
  return Boolean(document.body) && normalize(renderedText(document.body)).toLowerCase().includes(needle);
`);

/**
 * Where an iframe element shows its frame: 'hidden' when the frame cannot be seen at all
 * (then neither can anything inside it, whatever its own document says).
 */
export const FRAME_PLACEMENT_FUNCTION = elementFunction<[], FramePlacement>(String.raw`
  ${HELPERS}
  if (!isVisible(element)) return 'hidden';
  return inViewport(element) ? 'inViewport' : 'offscreen';
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


/** One localStorage entry, as a device's saved state keeps it (device-state.ts). */
export interface StorageItem {
  name: string;
  value: string;
}

export const READ_LOCAL_STORAGE_SCRIPT = script<Record<string, never>, StorageItem[]>(String.raw`
  return Object.keys(localStorage).map((name) => ({ name, value: localStorage.getItem(name) ?? '' }));
`);

/** Replaces the origin's localStorage with the given entries. */
export const WRITE_LOCAL_STORAGE_SCRIPT = script<{ items: StorageItem[] }, void>(String.raw`
  localStorage.clear();
  for (const item of args.items) localStorage.setItem(item.name, item.value);
`);
