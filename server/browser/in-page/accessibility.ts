// How an element presents itself to a user of assistive technology: its role, its
// accessible name and its value, approximated the way ARIA computes them.
import { htmlPropertiesOf, isHtmlTag, tagOf } from './dom-query.js';
import { renderedText } from './rendered-text.js';
import { normalize } from './text-match.js';

const BUTTON_INPUT_TYPES = ['button', 'submit', 'reset', 'image'];

function inputType(el: Element): string {
  return (el.getAttribute('type') || 'text').toLowerCase();
}

export function roleOf(el: Element): string {
  const explicit = normalize(el.getAttribute('role'));
  if (explicit) return explicit.split(' ')[0] ?? explicit;
  const tag = tagOf(el);
  if (tag === 'a') return 'link';
  if (tag === 'button' || tag === 'summary') return 'button';
  if (isHtmlTag(el, 'select')) return el.multiple ? 'listbox' : 'combobox';
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
  if (htmlPropertiesOf(el).isContentEditable) return 'textbox';
  return 'clickable';
}

/** Text of the elements aria-labelledby names. */
export function labelledByText(el: Element): string {
  const ids = normalize(el.getAttribute('aria-labelledby'));
  if (!ids) return '';
  // Ids are scoped to a shadow tree, so they resolve in the element's own root.
  const root = el.getRootNode() as Document | ShadowRoot;
  return ids
    .split(' ')
    .map((id) => root.getElementById(id))
    .filter((labelEl) => labelEl !== null)
    .map((labelEl) => renderedText(labelEl) || labelEl.textContent)
    .join(' ');
}

/** Text of the <label>s of a form control, whether by for= or by nesting. */
export function labelText(el: Element): string {
  // Only labelable elements (input, select, button, ...) have `labels`.
  const { labels } = el as { labels?: NodeListOf<HTMLLabelElement> | null };
  return labels ? Array.from(labels).map((label) => renderedText(label)).join(' ') : '';
}

function isFormField(el: Element): boolean {
  return ['input', 'select', 'textarea'].includes(tagOf(el));
}

/** Accessible-name approximation, in the order ARIA computes it. */
export function nameOf(el: Element): string {
  const candidates = [el.getAttribute('aria-label'), labelledByText(el), labelText(el)];
  if (isHtmlTag(el, 'input') && BUTTON_INPUT_TYPES.includes(inputType(el))) {
    candidates.push(el.value, el.getAttribute('alt'));
  }
  if (!isFormField(el)) {
    candidates.push(renderedText(el));
    const img = el.querySelector('img[alt]');
    if (img) candidates.push(img.getAttribute('alt'));
  }
  candidates.push(el.getAttribute('placeholder'), el.getAttribute('title'), el.getAttribute('name'));
  return normalize(candidates.find((text) => normalize(text) !== '') || '');
}

/**
 * Current value of a form field; undefined for password fields, fields masked with
 * `-webkit-text-security` (where the agent typed a credential, or the site masks itself),
 * and non-fields.
 */
export function valueOf(el: Element): string | undefined {
  if (el instanceof HTMLElement && el.style.getPropertyValue('-webkit-text-security') === 'disc') return undefined;
  if (isHtmlTag(el, 'select')) {
    return Array.from(el.selectedOptions)
      .map((option) => option.text)
      .join(', ');
  }
  if (isHtmlTag(el, 'textarea')) return el.value;
  if (!isHtmlTag(el, 'input')) return undefined;
  const type = inputType(el);
  if (type === 'password' || BUTTON_INPUT_TYPES.includes(type)) return undefined;
  if (type === 'checkbox' || type === 'radio') return el.checked ? 'checked' : 'unchecked';
  return el.value;
}
