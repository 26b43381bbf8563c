// A focused field's caret stays lit instead of blinking. Each blink repaints the page, and
// while the page is recorded each repaint is a captured frame (Chromium's GPU process draws
// and reads back the whole viewport, its browser process encodes a JPEG): two frames a
// second on a page that does not change, about a third of a form task's frames. The caret
// still shows where typing goes.

/**
 * Installed in every document of the agent's page: `caret-animation: manual` on the root,
 * inherited by every element, shadow trees included, from a style sheet of its own that
 * the document adopts (no element is added or changed: a page that renders its own
 * <html> attributes, as a framework hydrating does, finds them as it left them).
 */
export function installSteadyCaret(): void {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(':root { caret-animation: manual; }');
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
}
