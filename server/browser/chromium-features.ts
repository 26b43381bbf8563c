/**
 * The Chromium features every device's browser, local or browserless, runs without. One
 * switch, since Chromium keeps only the last `--disable-features` of a command line
 * (puppeteer, which launches both kinds, merges them):
 * - AutofillServerCommunication: Chromium asks Google's autofill server about every form a
 *   page shows. The forms of the pages a device visits are no third party's to know of
 *   (and on a host without a network each ask was a refused connection through the
 *   egress proxy).
 * - WebUIOmniboxPopup, WebUIOmniboxAimPopup: a headless browser still builds the address
 *   bar's suggestion popup as a page of its own, in a renderer of its own, at every start:
 *   about 1 s of CPU, half of all a launch costs, for a popup nobody can open (measured in
 *   docs/performance.md, "Issue 26, eleventh session").
 */
export const DEVICE_DISABLED_FEATURES = '--disable-features=AutofillServerCommunication,WebUIOmniboxPopup,WebUIOmniboxAimPopup';
