import fs from 'node:fs';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { expect, Page, test as base } from '@playwright/test';
import { attachPlatform, RunningApi, TestPlatform } from '../support/platform';
import { call } from '../support/http';
import { ALL_TASK_QUEUES } from '../../domain/task-queues';
import { IdentityProvider, startIdentityProvider } from '../support/identity-provider';

/** The directory users every console test signs in as (through the development sign-in, as a person would). */
export const PEOPLE = {
  admin: { email: 'ada@example.test', name: 'Ada Admin', roles: ['ADMIN'], siteIds: [] as string[], locale: 'en' },
  manager: { email: 'mona@example.test', name: 'Mona Manager', roles: ['MANAGER'], siteIds: ['site-1'], locale: 'ar' },
  editor: { email: 'eddie@example.test', name: 'Eddie Editor', roles: ['EDITOR'], siteIds: ['site-1'], locale: 'en' },
  viewer: { email: 'vic@example.test', name: 'Vic Viewer', roles: ['VIEWER'], siteIds: ['site-1'], locale: 'en' },
};
export type Person = keyof typeof PEOPLE;

export interface ConsolePlatform {
  platform: TestPlatform;
  api: RunningApi;
  /** The organisation's identity provider, for a worker that asked for one (`test.use({ withIdentityProvider: true })`). */
  identityProvider: IdentityProvider | null;
  /** A token of a directory user (for the tests' own setup calls, never the console's). */
  tokenOf(person: Person): Promise<string>;
}

/**
 * One platform per Playwright worker: its own database and namespace, an API behind its own edge, and a
 * worker on every task queue calling that API back (approval callbacks, archive uploads).
 */
export const test = base.extend<{ signIn: (person: Person) => Promise<Page> }, { opsflow: ConsolePlatform; withIdentityProvider: boolean }>({
  withIdentityProvider: [false, { option: true, scope: 'worker' }],
  opsflow: [
    async ({ withIdentityProvider }, use) => {
      let consoleUrl = '';
      const identityProvider = withIdentityProvider
        ? await startIdentityProvider({
            users: [{ sub: 'idp-ada', name: 'Ada from the IdP', email: 'ada@idp.test', roles: ['ADMIN'], sites: [] }],
            redirectUri: () => consoleUrl,
          })
        : null;
      const platform = await attachPlatform({
        env: identityProvider
          ? {
              JWT_JWKS_URL: identityProvider.jwksUrl,
              JWT_ISSUER: identityProvider.issuer,
              JWT_AUDIENCE: identityProvider.audience,
              OIDC_CLIENT_ID: identityProvider.clientId,
            }
          : {},
      });
      const api = await platform.startApi();
      consoleUrl = `${api.url}/console/`;
      await platform.startWorker(ALL_TASK_QUEUES, { API_INTERNAL_URL: api.url });
      // With an identity provider only its tokens are accepted: the directory is not seeded with development ones.
      const ids = new Map<Person, string>();
      if (!identityProvider) {
        const setup = await platform.token({ sub: 'setup', roles: ['ADMIN'], sites: [] });
        for (const [person, user] of Object.entries(PEOPLE) as [Person, (typeof PEOPLE)[Person]][]) {
          const created = await call(api.url, 'POST', '/api/directory/users', { token: setup, body: user });
          if (created.status !== 201) throw new Error(`seeding ${user.email}: ${created.status} ${JSON.stringify(created.body)}`);
          ids.set(person, created.body.id);
        }
      }
      const tokenOf = (person: Person) =>
        platform.token({ sub: ids.get(person)!, name: PEOPLE[person].name, roles: PEOPLE[person].roles, sites: PEOPLE[person].siteIds });
      await use({ platform, api, identityProvider, tokenOf });
      await platform.close();
      await identityProvider?.close();
    },
    { scope: 'worker', timeout: 180000 },
  ],
  // What the browser saw, printed when a test fails: CI keeps only the log, not the test-results folder.
  page: async ({ page }, use, testInfo) => {
    const seen: string[] = [];
    const note = (line: string) => seen.push(`${new Date().toISOString()} ${line}`);
    page.on('console', (message) => message.type() === 'error' && note(`console error: ${message.text()}`));
    page.on('pageerror', (error) => note(`page error: ${error.message}`));
    page.on('requestfailed', (request) => note(`request failed: ${request.method()} ${request.url()} ${request.failure()?.errorText}`));
    page.on('response', (answer) => answer.status() >= 500 && note(`answer ${answer.status()}: ${answer.request().method()} ${answer.url()}`));
    page.on('framenavigated', (frame) => frame === page.mainFrame() && note(`at ${frame.url()}`));
    await use(page);
    if (testInfo.status === testInfo.expectedStatus) return;
    const snapshot = await page
      .locator('body')
      .ariaSnapshot({ timeout: 5000 })
      .catch((error: Error) => `(no snapshot: ${error.message})`);
    console.log(`What the browser saw in "${testInfo.title}":\n${seen.join('\n')}\nlast at ${page.url()}, showing:\n${snapshot}`);
  },
  signIn: async ({ page, opsflow }, use) => {
    await use(async (person) => {
      await page.goto(`${opsflow.api.url}/console/`);
      await page.getByRole('button', { name: new RegExp(`^${PEOPLE[person].name}`) }).click();
      await expect(page.getByText(`Signed in as ${PEOPLE[person].name}`)).toBeVisible();
      return page;
    });
  },
});

export { expect };

/** axe-core on what the page shows now: no serious or critical violation. */
export async function expectAccessible(page: Page): Promise<void> {
  // The screen at rest: no control under the pointer in its hover state.
  await page.mouse.move(0, 0);
  // A rendered email is the template author's HTML in a script-less sandbox: axe cannot run inside it (it
  // would wait for the frame until the test times out), and it is not the console's own markup.
  const { violations } = await new AxeBuilder({ page }).exclude('iframe[sandbox]').options({ iframes: false }).analyze();
  const blocking = violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
  expect(
    blocking.map((violation) => ({ rule: violation.id, impact: violation.impact, where: violation.nodes.map((node) => node.target.join(' ')).slice(0, 5) })),
  ).toEqual([]);
}

const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'docs', 'screenshots');

/**
 * Checks a screen's accessibility in English and in Arabic; with CONSOLE_SCREENSHOTS=1 also writes
 * docs/screenshots/{name}.en.png and {name}.ar.png (the README shows them). Leaves the page in English.
 */
export async function checkScreen(page: Page, name: string): Promise<void> {
  for (const language of ['en', 'ar'] as const) {
    if (language === 'ar') await page.getByRole('button', { name: 'العربية' }).click();
    await expect(page.locator('html')).toHaveAttribute('dir', language === 'ar' ? 'rtl' : 'ltr');
    await expectAccessible(page);
    if (process.env.CONSOLE_SCREENSHOTS) {
      fs.mkdirSync(SCREENSHOTS, { recursive: true });
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.${language}.png`), fullPage: true });
    }
  }
  await page.getByRole('button', { name: 'English' }).click();
  await expect(page.locator('html')).toHaveAttribute('dir', 'ltr');
}

/**
 * A whole second `seconds` ahead, in the browser's own time zone: the value a datetime-local input takes
 * (`local`, to the second) and the instant it stands for (`ms`), to hold the platform's timing against.
 */
export function localTimeAhead(page: Page, seconds: number): Promise<{ local: string; ms: number }> {
  return page.evaluate((ahead) => {
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + ahead * 1000);
    const pad = (n: number) => String(n).padStart(2, '0');
    return {
      local: `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}`,
      ms: at.getTime(),
    };
  }, seconds);
}
