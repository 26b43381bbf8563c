import { randomUUID } from 'node:crypto';
import { chown, mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { CDPSession, Page, Protocol } from 'puppeteer-core';
import { openCdpSession } from './cdp-sessions.js';
import { ActionError, type DownloadedFile, type DownloadLimits } from './types.js';

/**
 * Runs `trigger` (a click) and waits for the download it starts to finish, into a new
 * folder under `downloadsDir` (inside the device's profile, so a browser running under
 * its own uid can write there: the folder is given the profile's owner). Chromium names
 * the file by the download's guid (`allowAndName`), so the page's suggested name never
 * becomes a path. The browser's downloads are allowed only while this waits and denied
 * again afterwards. A download past `maxBytes` is canceled: download_too_large.
 */
export async function downloadByClick(page: Page, downloadsDir: string | null, limits: DownloadLimits, trigger: () => Promise<void>): Promise<DownloadedFile> {
  if (downloadsDir === null) throw new ActionError('download_failed', "downloads are not kept for this device's browser provider");
  // One task runs on a device at a time: what an interrupted download left is removed.
  await rm(downloadsDir, { recursive: true, force: true });
  const folder = path.join(downloadsDir, randomUUID());
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const owner = await stat(path.dirname(downloadsDir));
  await chown(downloadsDir, owner.uid, owner.gid);
  await chown(folder, owner.uid, owner.gid);

  const session: CDPSession = await openCdpSession(page.browser().target());
  try {
    await session.send('Browser.setDownloadBehavior', { behavior: 'allowAndName', downloadPath: folder, eventsEnabled: true });
    const finished = waitForDownload(session, limits);
    // A rejection before the trigger returned is still reported once, by the await below.
    finished.catch(() => undefined);
    await trigger();
    const download = await finished;
    return { file: path.join(folder, download.guid), suggestedName: download.suggestedName, size: download.size, folder };
  } finally {
    await session.send('Browser.setDownloadBehavior', { behavior: 'deny' }).catch(() => undefined);
    await session.detach().catch(() => undefined);
  }
}

function waitForDownload(session: CDPSession, limits: DownloadLimits): Promise<{ guid: string; suggestedName: string; size: number }> {
  return new Promise((resolve, reject) => {
    let started: Protocol.Browser.DownloadWillBeginEvent | null = null;
    const timer = setTimeout(() => {
      if (started !== null) void session.send('Browser.cancelDownload', { guid: started.guid }).catch(() => undefined);
      end(new ActionError('download_failed', started === null ? 'the click started no download in time' : 'the download did not finish in time'));
    }, limits.timeoutMs);
    const end = (error: ActionError | null, value?: { guid: string; suggestedName: string; size: number }) => {
      clearTimeout(timer);
      session.off('Browser.downloadWillBegin', onBegin);
      session.off('Browser.downloadProgress', onProgress);
      if (error !== null) reject(error);
      else resolve(value!);
    };
    const onBegin = (event: Protocol.Browser.DownloadWillBeginEvent) => {
      // One download per action: a second one the page starts is canceled.
      if (started !== null) return void session.send('Browser.cancelDownload', { guid: event.guid }).catch(() => undefined);
      started = event;
    };
    const onProgress = (event: Protocol.Browser.DownloadProgressEvent) => {
      if (started === null || event.guid !== started.guid) return;
      if (event.receivedBytes > limits.maxBytes || event.totalBytes > limits.maxBytes) {
        void session.send('Browser.cancelDownload', { guid: event.guid }).catch(() => undefined);
        return end(new ActionError('download_too_large', `the download is larger than the ${limits.maxBytes} bytes this task may still keep`));
      }
      if (event.state === 'canceled') return end(new ActionError('download_failed', 'the download was canceled'));
      if (event.state === 'completed') end(null, { guid: event.guid, suggestedName: started.suggestedFilename, size: event.receivedBytes });
    };
    session.on('Browser.downloadWillBegin', onBegin);
    session.on('Browser.downloadProgress', onProgress);
  });
}
