// Finding elements of the page's document, open shadow roots included, and telling
// whether the user can see them.
//
// The caches below are module state, and live for one call of one page function: the
// bundle runs afresh in every call (see ../in-page-scripts.ts).

/** What observe() lists and a click may land on. */
export const INTERACTIVE_SELECTOR = [
  'a[href]', 'button', 'input:not([type=hidden])', 'select', 'textarea', 'summary',
  '[role=button]', '[role=link]', '[role=checkbox]', '[role=radio]', '[role=switch]',
  '[role=tab]', '[role=menuitem]', '[role=option]', '[role=textbox]', '[role=combobox]',
  '[role=searchbox]', '[contenteditable=""]', '[contenteditable=true]', '[onclick]',
  '[tabindex]:not([tabindex="-1"])',
].join(',');

/** What text may be typed into. */
export const FIELD_SELECTOR = [
  'input:not([type=hidden]):not([type=button]):not([type=submit]):not([type=reset]):not([type=image])',
  'textarea', 'select', '[contenteditable=""]', '[contenteditable=true]',
  '[role=textbox]', '[role=combobox]', '[role=searchbox]',
].join(',');

export function tagOf(el: Element): string {
  return el.tagName.toLowerCase();
}

/**
 * Whether el is the HTML element `tag`, judged by its tag name as the page code always
 * has: `instanceof` would also reject an element that came from another frame's realm.
 */
export function isHtmlTag<Tag extends keyof HTMLElementTagNameMap>(
  el: Element,
  tag: Tag,
): el is HTMLElementTagNameMap[Tag] {
  return tagOf(el) === tag;
}

/**
 * The HTML-only properties the page code reads on any element. SVG and MathML elements
 * lack them: there they read as undefined.
 */
export function htmlPropertiesOf(el: Element): { innerText?: string; isContentEditable?: boolean } {
  return el as Partial<HTMLElement>;
}

export function isVisible(el: Element): boolean {
  const rect = el.getBoundingClientRect();
  if (rect.width === 0 && rect.height === 0) return false;
  return el.checkVisibility({ visibilityProperty: true });
}

/** Within this document's viewport; an iframe's viewport is the iframe's box. */
export function inViewport(el: Element): boolean {
  const rect = el.getBoundingClientRect();
  return rect.bottom > 0 && rect.right > 0 && rect.top < innerHeight && rect.left < innerWidth;
}

// Open shadow roots are searched like the light DOM. Closed ones stay out of reach:
// the page holds the only reference to them.
let openShadowRootList: ShadowRoot[] | null = null;

/** Every open shadow root in the document, nested ones included; found once per call. */
export function openShadowRoots(): ShadowRoot[] {
  if (openShadowRootList === null) {
    const found: ShadowRoot[] = [];
    const scopes: ParentNode[] = [document];
    for (let scope = scopes.pop(); scope !== undefined; scope = scopes.pop()) {
      for (const el of scope.querySelectorAll('*')) {
        if (el.shadowRoot) {
          found.push(el.shadowRoot);
          scopes.push(el.shadowRoot);
        }
      }
    }
    openShadowRootList = found;
  }
  return openShadowRootList;
}

/**
 * Elements under root matching a valid selector, inside open shadow roots too, in
 * document order with a host's shadow content right after the host. Pages without
 * shadow roots keep the native querySelectorAll, which is several times faster.
 */
export function deepQueryAll(selector: string, root: ParentNode & Node = document): Element[] {
  if (openShadowRoots().length === 0) return Array.from(root.querySelectorAll(selector));
  const found: Element[] = [];
  const visit = (scope: Node): void => {
    const walker = document.createTreeWalker(scope, NodeFilter.SHOW_ELEMENT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      // SHOW_ELEMENT lets elements through only.
      const el = node as Element;
      if (el.matches(selector)) found.push(el);
      if (el.shadowRoot) visit(el.shadowRoot);
    }
  };
  visit(root);
  return found;
}

/**
 * Elements matching a CSS selector, open shadow roots included (a selector does not
 * cross a shadow boundary itself), or null when the string is not a valid selector.
 */
export function bySelector(selector: string): Element[] | null {
  try {
    document.createDocumentFragment().querySelector(selector);
  } catch {
    return null;
  }
  return deepQueryAll(selector);
}
