/**
 * Chromium asks Google's autofill server about every form a page shows. The forms of the
 * pages a device visits are no third party's to know of: every device's browser, local or
 * browserless, runs without it (and on a host without a network each ask was a refused
 * connection through the egress proxy).
 */
export const NO_AUTOFILL_SERVER = '--disable-features=AutofillServerCommunication';
