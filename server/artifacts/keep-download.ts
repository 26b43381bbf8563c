import { createHash, randomUUID } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import type { Db } from '../../db/client';
import { ActionError, type DownloadedFile } from '../browser';
import { contentTypeFor, insertTaskFile, safeFileName, taskFileObjectKey } from '../domain/files/task-files';
import type { Logger } from '../core/log';
import type { ObjectStore } from '../storage';

export interface KeepDownloadDeps {
  db: Db;
  store: ObjectStore;
  log: Logger;
  /** The service's own working folder (`<dataDir>/downloads`), where a copy is made. */
  workDir: string;
}

/**
 * Takes a finished download out of the browser's folder into the object store and lists
 * it on the task. The browser (another uid, as root) wrote that folder, so the file is
 * opened without following links and must be a plain file with one link: a compromised
 * browser cannot make the service read anything else. It is copied to a folder of the
 * service's own while its SHA-256 is computed and its size held to `maxBytes`, then
 * stored. The browser's folder is removed whatever happens. A store that refuses the file
 * fails the download (`download_failed`): the step waits for its file, and the task
 * says which step could not keep it.
 */
export async function keepDownload(deps: KeepDownloadDeps, task: { id: string; orgId: string }, download: DownloadedFile, maxBytes: number): Promise<void> {
  const copy = path.join(deps.workDir, randomUUID());
  try {
    const handle = await open(download.file, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => {
      throw new ActionError('download_failed', 'the downloaded file could not be opened');
    });
    let size = 0;
    const hash = createHash('sha256');
    try {
      const info = await handle.stat();
      if (!info.isFile() || info.nlink !== 1) throw new ActionError('download_failed', 'the download is not a plain file');
      if (info.size > maxBytes) throw new ActionError('download_too_large', `the download is larger than the ${maxBytes} bytes this task may still keep`);
      await mkdir(deps.workDir, { recursive: true, mode: 0o700 });
      const meter = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          size += chunk.length;
          if (size > maxBytes) return done(new ActionError('download_too_large', `the download is larger than the ${maxBytes} bytes this task may still keep`));
          hash.update(chunk);
          done(null, chunk);
        },
      });
      await pipeline(handle.createReadStream(), meter, createWriteStream(copy, { mode: 0o600 }));
    } finally {
      await handle.close().catch(() => undefined);
    }
    const fileId = randomUUID();
    const name = safeFileName(download.suggestedName);
    const contentType = contentTypeFor(name);
    const objectKey = taskFileObjectKey(task.id, fileId);
    try {
      await deps.store.put(objectKey, { file: copy }, contentType);
    } catch (error) {
      deps.log.warn({ err: error, taskId: task.id }, 'the object store refused a downloaded file; the download failed');
      throw new ActionError('download_failed', 'the downloaded file could not be stored');
    }
    await insertTaskFile(deps.db, { id: fileId, orgId: task.orgId, taskId: task.id, name, sizeBytes: size, contentType, sha256: hash.digest('hex'), objectKey });
  } finally {
    await rm(copy, { force: true });
    await rm(download.folder, { recursive: true, force: true });
  }
}
