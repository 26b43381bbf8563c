import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Where a generated key lives: beside the embedded database it belongs to. */
export const GENERATED_KEY_FILE = 'secrets.key';

export type SecretsKeySource = { key: Buffer; origin: 'configured' | 'generated' | 'data_directory' };

/**
 * The vault's key at start. A configured OPERATOR_SECRETS_KEY is used as it is. Without
 * one, the embedded database (one machine, one data directory) gets a key kept in the
 * data directory (0600), generated on the first start; a database of its own
 * (DATABASE_URL), which several instances share and which is backed up elsewhere, must be
 * given the key: the start refuses, rather than seal secrets under a key only one
 * machine holds.
 */
export async function resolveSecretsKey(configured: Buffer | null, embeddedDatabase: boolean, dataDir: string): Promise<SecretsKeySource> {
  if (configured !== null) return { key: configured, origin: 'configured' };
  if (!embeddedDatabase) {
    throw new Error('OPERATOR_SECRETS_KEY is required with DATABASE_URL: set it to 32 random bytes in base64 (openssl rand -base64 32).');
  }
  const file = path.join(dataDir, GENERATED_KEY_FILE);
  try {
    const key = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
    if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte key in base64.`);
    return { key, origin: 'data_directory' };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const key = randomBytes(32);
  // `wx`: two starts racing on one data directory cannot both write (the data directory's lock prevents it anyway).
  await writeFile(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  return { key, origin: 'generated' };
}
