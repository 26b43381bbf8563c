import { isLocalEndpoint } from './browserless-endpoint.js';

/** The service cannot hold remote browsers to the device egress policy, and nobody said anything else does. */
export class EgressUnenforceableError extends Error {}

/** How the devices' browsers are held to the egress policy, decided once at start. */
export interface BrowserEgressPlan {
  /** Where the egress proxy listens: an address of this machine. */
  listenHost: string;
  /** What the browsers dial: the listening address, or a name that reaches it (and other instances' proxies). */
  dialHost: string;
  /** Whether the browsers go through the proxy (false: the operator enforces egress elsewhere). */
  throughProxy: boolean;
  /** Whether each device must prove itself to the proxy: it listens on a network other hosts reach. */
  perDeviceCredentials: boolean;
  /** A line for the log at start, or null. */
  warning: string | null;
}

export interface EgressSettings {
  /** OPERATOR_EGRESS_PROXY_HOST: where remote browsers reach the proxy (an address or a name); null to take OPERATOR_INTERNAL_URL's host. */
  proxyHost: string | null;
  /** OPERATOR_INTERNAL_URL. */
  internalUrl: string | null;
  /** OPERATOR_EGRESS_ENFORCED_ELSEWHERE. */
  enforcedElsewhere: boolean;
}

const LOOPBACK = '127.0.0.1';

/**
 * Local Chromium and a browserless on this machine reach the proxy on loopback. A
 * browserless on other hosts reaches it on the internal network, each device with a
 * credential of its own (net/egress-credentials.ts): the proxy listens on
 * OPERATOR_INTERNAL_URL's host (else on OPERATOR_EGRESS_PROXY_HOST) and the browsers dial
 * OPERATOR_EGRESS_PROXY_HOST (else that host). A name there that reaches every instance's
 * proxy outlives any one instance, and keeps the network of a device another instance
 * adopted. With no such address, running devices there would let their
 * pages reach that host's loopback, the private network and metadata addresses: the
 * service refuses to start, unless the operator says the browserless deployment enforces
 * the policy itself (`enforcedElsewhere`).
 */
export function planBrowserEgress(browser: { kind: 'local' | 'browserless'; browserlessUrl: string | null }, settings: EgressSettings): BrowserEgressPlan {
  if (browser.kind === 'local' || isLocalEndpoint(browser.browserlessUrl ?? '')) {
    return { listenHost: LOOPBACK, dialHost: LOOPBACK, throughProxy: true, perDeviceCredentials: false, warning: null };
  }
  const internalHost = internalHostOf(settings.internalUrl);
  const listenHost = internalHost ?? settings.proxyHost;
  const dialHost = settings.proxyHost ?? internalHost;
  if (listenHost !== null && dialHost !== null) return { listenHost, dialHost, throughProxy: true, perDeviceCredentials: true, warning: null };
  if (!settings.enforcedElsewhere) {
    throw new EgressUnenforceableError(
      "BROWSERLESS_URL is on another machine, and this service has no internal address its browsers could reach its egress proxy at: their pages could reach that machine's loopback, your private network and metadata addresses. " +
        'Set OPERATOR_EGRESS_PROXY_HOST (or OPERATOR_INTERNAL_URL) to an address of this machine the browserless hosts reach, or OPERATOR_EGRESS_ENFORCED_ELSEWHERE=true once that deployment enforces the device egress policy itself (docs/architecture.md, "Egress, when browserless runs on other machines").',
    );
  }
  return {
    listenHost: LOOPBACK,
    dialHost: LOOPBACK,
    throughProxy: false,
    perDeviceCredentials: false,
    warning: 'the browserless endpoint is on another machine and OPERATOR_EGRESS_ENFORCED_ELSEWHERE=true: its deployment must enforce the device egress policy (docs/architecture.md, "Egress, when browserless runs on other machines")',
  };
}

/** The host of the internal URL, unless it is loopback, which no other machine reaches. */
function internalHostOf(internalUrl: string | null): string | null {
  if (internalUrl === null || !URL.canParse(internalUrl) || isLocalEndpoint(internalUrl)) return null;
  // Bare, as listen() takes it: an IPv6 address without its URL brackets.
  return new URL(internalUrl).hostname.replace(/^\[(.*)\]$/, '$1');
}
