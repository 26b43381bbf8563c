// Text as the page shows it. innerText follows the light tree: it skips shadow content
// and what slots show, so the branches holding either are walked in flat-tree order.
//
// The cache below is module state, and lives for one call of one page function: the
// bundle runs afresh in every call (see ../in-page-scripts.ts).
import { htmlPropertiesOf, isHtmlTag, openShadowRoots } from './dom-query.js';
import { normalize } from './text-match.js';

let flatTreeBranchSet: Set<Node> | null = null;

/**
 * Shadow hosts, slots and everything above them up to the document, across shadow
 * boundaries: the elements whose innerText misses rendered text.
 */
function flatTreeBranches(): Set<Node> {
  if (flatTreeBranchSet === null) {
    const branches = new Set<Node>();
    const mark = (node: Node): void => {
      for (let n: Node | null = node; n && !branches.has(n); n = n instanceof ShadowRoot ? n.host : n.parentNode) {
        branches.add(n);
      }
    };
    for (const root of openShadowRoots()) {
      mark(root.host);
      for (const slot of root.querySelectorAll('slot')) mark(slot);
    }
    flatTreeBranchSet = branches;
  }
  return flatTreeBranchSet;
}

/**
 * Text of an element as rendered. Branches holding shadow content or slots are walked
 * in flat-tree order; everything else is left to innerText. SVG and MathML elements,
 * which have no innerText, read as ''.
 */
export function renderedText(el: Element): string {
  const branches = flatTreeBranches();
  if (!branches.has(el)) return htmlPropertiesOf(el).innerText ?? '';
  const parts: string[] = [];
  const collect = (node: Node): void => {
    if (node.nodeType === Node.TEXT_NODE) {
      parts.push((node as Text).data);
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE) return;
    const element = node as Element;
    const display = getComputedStyle(element).display;
    if (display === 'none') return;
    const gap = display === 'inline' || display === 'contents' ? '' : ' ';
    parts.push(gap);
    if (branches.has(element)) {
      const children = element.shadowRoot
        ? element.shadowRoot.childNodes
        : isHtmlTag(element, 'slot')
          ? element.assignedNodes({ flatten: true })
          : element.childNodes;
      for (const child of children) collect(child);
    } else {
      parts.push(htmlPropertiesOf(element).innerText ?? '');
    }
    parts.push(gap);
  };
  collect(el);
  return normalize(parts.join(''));
}
