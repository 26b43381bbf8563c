import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { ObjectStore } from '../storage';
import { parseByteRange } from './byte-range';

export interface ObjectResponse {
  key: string;
  size: number;
  contentType: string;
  /** `attachment; filename=...` for downloads; none: shown inline. */
  contentDisposition?: string;
}

/**
 * Answers with a stored object: 200 whole, or 206 with Content-Range for one `Range`
 * (416 range_not_satisfiable past its end, thrown before anything is written). The object
 * is never changed once written, so it may be cached privately. Returns false when the
 * store no longer has it (the caller answers its 404).
 */
export async function sendObject(store: ObjectStore, req: IncomingMessage, res: ServerResponse, object: ObjectResponse): Promise<boolean> {
  const range = parseByteRange(req.headers.range, object.size);
  const body = await store.get(object.key, range ?? undefined);
  if (body === null) return false;
  const headers: Record<string, string> = {
    'Content-Type': object.contentType,
    'Accept-Ranges': 'bytes',
    'Cache-Control': 'private, max-age=3600',
    'X-Content-Type-Options': 'nosniff',
  };
  if (object.contentDisposition !== undefined) headers['Content-Disposition'] = object.contentDisposition;
  if (range === null) {
    res.writeHead(200, { ...headers, 'Content-Length': String(object.size) });
  } else {
    res.writeHead(206, { ...headers, 'Content-Length': String(range.end - range.start + 1), 'Content-Range': `bytes ${range.start}-${range.end}/${object.size}` });
  }
  if (req.method === 'HEAD') {
    body.destroy();
    res.end();
    return true;
  }
  // A client that leaves mid-download ends the pipeline; nothing else to clean up.
  await pipeline(body, res).catch(() => undefined);
  return true;
}
