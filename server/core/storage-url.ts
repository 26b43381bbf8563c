import path from 'node:path';

export interface S3Location {
  bucket: string;
  /** Without leading or trailing slashes; '' for the bucket's root. */
  prefix: string;
  region: string;
  /** An S3-compatible server's address; null for AWS itself. */
  endpoint: string | null;
  forcePathStyle: boolean;
  /** From the URL's userinfo; null: the AWS SDK's standard chain (AWS_* variables, profiles, roles). */
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
}

export type StorageLocation = { kind: 'local'; directory: string } | ({ kind: 's3' } & S3Location);

/**
 * OPERATOR_STORAGE_URL, parsed at startup; a bad one is refused then, with a message that
 * never repeats the URL (it may hold a secret key).
 * - unset: `<data dir>/storage`;
 * - `file:///absolute/dir`: a directory of your choosing (one that several instances on
 *   one machine, or on a shared filesystem, can share);
 * - `s3://[<access key id>:<secret>@]<bucket>[/<prefix>][?region=..&endpoint=http://host:port&force_path_style=true|false]`.
 */
export function parseStorageUrl(value: string | null, dataDir: string): StorageLocation {
  if (value === null) return { kind: 'local', directory: path.join(dataDir, 'storage') };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error('Invalid configuration: OPERATOR_STORAGE_URL is not a URL (expected file:///dir or s3://bucket/prefix).');
  }
  if (url.protocol === 'file:') {
    if (url.host !== '' || url.pathname === '/' ) throw new Error('Invalid configuration: OPERATOR_STORAGE_URL file URL must be file:///absolute/directory.');
    return { kind: 'local', directory: path.resolve(decodeURIComponent(url.pathname)) };
  }
  if (url.protocol !== 's3:') throw new Error('Invalid configuration: OPERATOR_STORAGE_URL must start with file:// or s3://.');
  const bucket = url.hostname;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new Error('Invalid configuration: OPERATOR_STORAGE_URL names no valid bucket.');
  const endpoint = url.searchParams.get('endpoint');
  if (endpoint !== null && !/^https?:\/\/[^/]+\/?$/.test(endpoint)) throw new Error('Invalid configuration: OPERATOR_STORAGE_URL endpoint must be http(s)://host[:port].');
  const forcePathStyle = url.searchParams.get('force_path_style');
  if (forcePathStyle !== null && forcePathStyle !== 'true' && forcePathStyle !== 'false') throw new Error('Invalid configuration: OPERATOR_STORAGE_URL force_path_style must be true or false.');
  const hasUser = url.username !== '' || url.password !== '';
  if (hasUser && (url.username === '' || url.password === '')) throw new Error('Invalid configuration: OPERATOR_STORAGE_URL credentials need both the access key id and the secret.');
  return {
    kind: 's3',
    bucket,
    prefix: decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, ''),
    region: url.searchParams.get('region') ?? 'us-east-1',
    endpoint: endpoint?.replace(/\/$/, '') ?? null,
    // S3-compatible servers rarely resolve bucket subdomains; AWS itself prefers them.
    forcePathStyle: forcePathStyle === null ? endpoint !== null : forcePathStyle === 'true',
    credentials: hasUser ? { accessKeyId: decodeURIComponent(url.username), secretAccessKey: decodeURIComponent(url.password) } : null,
  };
}
