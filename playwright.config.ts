import { defineConfig } from '@playwright/test';

/**
 * The console's browser tests (`npx playwright test`, run by `npm test` after jest): Debian's chromium, no
 * browser download, against the real platform that test/support/global-setup.ts starts (as jest's does).
 */
export default defineConfig({
  testDir: 'test/console',
  testMatch: '**/*.spec.ts',
  globalSetup: './test/console/platform-setup.ts',
  timeout: 180000,
  expect: { timeout: 15000 },
  // Each worker attaches a platform of its own (database, namespace, edge); two cores run two.
  workers: 2,
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  reporter: [['list'], ['./test/support/timing-reporter-playwright.ts']],
  use: {
    launchOptions: { executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] },
    locale: 'en-GB',
    viewport: { width: 1280, height: 860 },
    trace: 'off',
  },
});
