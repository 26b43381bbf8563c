import { isLocalEndpoint } from './browserless-endpoint.js';

/** The service cannot hold remote browsers to the device egress policy, and nobody said anything else does. */
export class EgressUnenforceableError extends Error {}

/**
 * Whether the devices' browsers reach the network through this service's egress proxy,
 * decided once at start. Local Chromium and a browserless on this machine do. A browserless
 * on another machine cannot: the proxy listens on this machine's loopback. Running devices
 * there anyway would let their pages reach that machine's loopback, the private network
 * and metadata addresses, so the service refuses to start, unless the operator says the
 * browserless deployment enforces the policy itself (`enforcedElsewhere`); then a warning
 * is returned for the log.
 */
export function remoteBrowserEgress(browser: { kind: 'local' | 'browserless'; browserlessUrl: string | null }, enforcedElsewhere: boolean): { throughProxy: boolean; warning: string | null } {
  if (browser.kind === 'local' || isLocalEndpoint(browser.browserlessUrl ?? '')) return { throughProxy: true, warning: null };
  if (!enforcedElsewhere) {
    throw new EgressUnenforceableError(
      'BROWSERLESS_URL is on another machine, whose browsers cannot use this service\'s egress proxy: their pages could reach that machine\'s loopback, your private network and metadata addresses. ' +
        'Run browserless on this machine, or set OPERATOR_EGRESS_ENFORCED_ELSEWHERE=true once that deployment enforces the device egress policy itself (docs/architecture.md, "Egress, when browserless runs on other machines").',
    );
  }
  return {
    throughProxy: false,
    warning: 'the browserless endpoint is on another machine and OPERATOR_EGRESS_ENFORCED_ELSEWHERE=true: its deployment must enforce the device egress policy (docs/architecture.md, "Egress, when browserless runs on other machines")',
  };
}
