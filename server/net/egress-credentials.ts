// Each device's browser proves to the egress proxy which device it is, when the proxy
// listens on a network other machines reach (browserless on other hosts): a Basic
// credential per device, `<device id>:<HMAC of the id>`, under one key every instance on
// the database shares (service_settings), so that any instance's proxy admits any device:
// browsers kept across a restart, and devices adopted from a dead instance whose proxy
// address (a name) now reaches another. Nothing without a device's credential may use the proxy.
import { createHmac, timingSafeEqual } from 'node:crypto';

const DEVICE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Its name among the database's shared secrets. */
export const EGRESS_CREDENTIAL_SECRET = 'egress_credential_key';

export interface ProxyCredentials {
  username: string;
  password: string;
}

export class EgressCredentials {
  /** `key`: the database's shared secret (loadServiceSecret). */
  constructor(private readonly key: Buffer) {}

  for(deviceId: string): ProxyCredentials {
    return { username: deviceId, password: this.secretOf(deviceId) };
  }

  /** The device a `Proxy-Authorization` header proves, or null. */
  deviceOf(header: string | undefined): string | null {
    const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header?.trim() ?? '');
    if (match === null) return null;
    const [deviceId, password, ...rest] = Buffer.from(match[1]!, 'base64').toString('utf8').split(':');
    if (deviceId === undefined || password === undefined || rest.length > 0 || !DEVICE_ID.test(deviceId)) return null;
    const expected = Buffer.from(this.secretOf(deviceId));
    const given = Buffer.from(password);
    return given.length === expected.length && timingSafeEqual(given, expected) ? deviceId : null;
  }

  private secretOf(deviceId: string): string {
    return createHmac('sha256', this.key).update(deviceId).digest('base64url');
  }
}
