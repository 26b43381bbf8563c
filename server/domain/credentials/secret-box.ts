import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Seals the credential vault's secrets with AES-256-GCM under OPERATOR_SECRETS_KEY.
 * A sealed value is `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url), where the key id is
 * the first 8 hex digits of the key's SHA-256, so a value sealed under the previous key is
 * known without a trial decryption. `context` (which row and which field) is the additional
 * authenticated data: a sealed value copied to another row or field does not open.
 */
export class SecretBox {
  readonly #current: { id: string; key: Buffer };
  readonly #previous: { id: string; key: Buffer } | null;

  constructor(current: Buffer, previous: Buffer | null = null) {
    this.#current = { id: keyId(current), key: current };
    this.#previous = previous === null ? null : { id: keyId(previous), key: previous };
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#current.key, iv);
    cipher.setAAD(Buffer.from(context));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', this.#current.id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  /** The plaintext; throws when the value was sealed under neither key, or was altered. */
  open(sealed: string, context: string): string {
    const [version, id, iv, tag, ciphertext] = sealed.split('.');
    if (version !== 'v1' || iv === undefined || tag === undefined || ciphertext === undefined) throw new Error('not a sealed value');
    const key = [this.#current, this.#previous].find((candidate) => candidate !== null && candidate.id === id)?.key;
    if (key === undefined) throw new Error(`sealed under an unknown key (${id})`);
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }

  /** Whether a sealed value must be sealed again under the current key (rotation). */
  isStale(sealed: string): boolean {
    return sealed.split('.')[1] !== this.#current.id;
  }
}

function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}
