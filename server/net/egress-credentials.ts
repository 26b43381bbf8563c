// Each device's browser proves to the egress proxy which device it is, when the proxy
// listens on a network other machines reach (browserless on other hosts): a Basic
// credential per device, `<device id>:<HMAC of the id>`, under a key kept in the data
// directory so that browsers kept across a restart (whose contexts hold the credential)
// are still admitted. Nothing without a device's credential may use the proxy.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

const FILE = 'egress-key';
const KEY_BYTES = 32;
const DEVICE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface ProxyCredentials {
  username: string;
  password: string;
}

export class EgressCredentials {
  private constructor(private readonly key: Buffer) {}

  /** The key of the data directory, made (0600) at its first start. */
  static async load(dataDir: string): Promise<EgressCredentials> {
    const file = path.join(dataDir, FILE);
    const stored = await readFile(file, 'utf8').then((text) => text.trim(), () => null);
    if (stored !== null && /^[0-9a-f]{64}$/.test(stored)) return new EgressCredentials(Buffer.from(stored, 'hex'));
    const key = randomBytes(KEY_BYTES);
    await writeFile(file, `${key.toString('hex')}\n`, { mode: 0o600 });
    return new EgressCredentials(key);
  }

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
