import fs from 'node:fs';
import globalSetup from '../support/global-setup';
import globalTeardown from '../support/global-teardown';

/** Playwright's global setup: the same real platform jest's starts (and the console built when stale); its teardown stops it. */
export default async function platformSetup(): Promise<() => Promise<void>> {
  const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!fs.existsSync(chromium)) throw new Error(`No chromium at ${chromium}: install Debian's chromium (.ci/run does) or set CHROMIUM_PATH.`);
  await globalSetup();
  return globalTeardown;
}
