import type { EgressGate } from './types.js';

/**
 * Chromium flags that send every connection of a browser through the egress proxy.
 * `<-loopback>` removes the implicit bypass Chromium keeps for localhost and 127.0.0.1,
 * so loopback is judged like any other destination. WebRTC may only use UDP through a
 * proxy, and there is none for UDP, so it cannot open peer connections to private hosts.
 */
export function egressFlags(egress: EgressGate): string[] {
  return [
    `--proxy-server=${egress.url}`,
    `--proxy-bypass-list=${LOOPBACK_THROUGH_PROXY}`,
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  ];
}

/** The bypass-list rule that takes loopback out of Chromium's default bypass. */
export const LOOPBACK_THROUGH_PROXY = '<-loopback>';
