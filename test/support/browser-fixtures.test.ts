import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { singletonSocketFolder } from '../../server/browser/chromium-process';
import { CHROMIUM_FLAGS } from '../../server/browser/local-provider';
import { launchChromiumAsTheService } from './browser-fixtures';

const exists = (file: string) => access(file).then(
  () => true,
  () => false,
);

describe('launchChromiumAsTheService', () => {
  const profiles: string[] = [];
  afterEach(async () => {
    await Promise.all(profiles.splice(0).map((profile) => rm(profile, { recursive: true, force: true })));
  });

  it('leaves no folder of its singleton socket in /tmp once closed (puppeteer kills it mid-close)', async () => {
    const profile = await mkdtemp(path.join(tmpdir(), 'fixture-profile-'));
    profiles.push(profile);
    const browser = await launchChromiumAsTheService(profile, CHROMIUM_FLAGS);
    const folder = await singletonSocketFolder(profile);
    expect(folder).toMatch(/^\/tmp\/org\.chromium\.Chromium\./);
    expect(await exists(folder!)).toBe(true);
    await browser.close();
    await expect.poll(() => exists(folder!), { timeout: 5_000 }).toBe(false);
  });
});
