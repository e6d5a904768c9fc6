import fs from 'node:fs';
import path from 'node:path';
import { Browser, chromium, Page } from 'playwright-core';
import { attachPlatform, RunningApi, TestPlatform } from '../support/platform';
import { call } from '../support/http';
import { PROJECT_ROOT } from '../../scripts/platform/children';

/**
 * The operator console in a real browser (Debian's chromium, driven by Playwright) against the real
 * platform behind its edge: sign-in, the services dashboard, the API's refusals as it words them, and the
 * Arabic layout.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let platform: TestPlatform;
let api: RunningApi;
let browser: Browser;

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`No chromium at ${CHROMIUM}: install Debian's chromium (.ci/run does) or set CHROMIUM_PATH.`);
  // Jest's global setup built it (as npm start does, when stale).
  if (!fs.existsSync(path.join(PROJECT_ROOT, 'console', 'dist', 'index.html'))) throw new Error('The console is not built (jest global setup builds it).');
  platform = await attachPlatform();
  api = await platform.startApi();
  const admin = await platform.token({ sub: 'setup', roles: ['ADMIN'], sites: [] });
  for (const user of [
    { email: 'ada@example.test', name: 'Ada Admin', roles: ['ADMIN'], siteIds: [] },
    { email: 'vic@example.test', name: 'Vic Viewer', roles: ['VIEWER'], siteIds: ['site-1'] },
  ]) {
    expect((await call(api.url, 'POST', '/api/directory/users', { token: admin, body: user })).status).toBe(201);
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});

afterAll(async () => {
  await browser?.close();
  await platform?.close();
});

async function signedIn(name: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${api.url}/console/`);
  await page.getByRole('button', { name: new RegExp(`^${name}`) }).click();
  await page.getByRole('heading', { name: 'Services' }).waitFor();
  return page;
}

test('an ADMIN signs in as a directory user and sees the services grouped by Dashboard Group, the token kept out of cookies', async () => {
  const page = await signedIn('Ada Admin');
  await page.getByRole('table', { name: 'Services: platform' }).waitFor();
  for (const core of ['infra', 'settings', 'directory']) await page.getByRole('cell', { name: core, exact: true }).waitFor();
  await page.getByText('Signed in as Ada Admin').waitFor();
  expect(await page.context().cookies()).toEqual([]);
  expect(await page.evaluate("sessionStorage.getItem('opsflow.token')")).toMatch(/^ey/);
  await page.close();
});

test('a VIEWER asking for what only an ADMIN may see gets the API\'s 403, shown with its title and code', async () => {
  const page = await signedIn('Vic Viewer');
  const alert = page.getByRole('alert');
  await alert.waitFor();
  expect(await alert.textContent()).toContain('Forbidden');
  expect(await page.getByTestId('problem-code').textContent()).toBe('FORBIDDEN');
  await page.close();
});

test('the language switch turns the console to Arabic, laid out right to left, and back', async () => {
  const page = await signedIn('Ada Admin');
  await page.getByRole('button', { name: 'العربية' }).click();
  await page.getByRole('heading', { name: 'الخدمات' }).waitFor();
  expect(await page.evaluate('[document.documentElement.dir, document.documentElement.lang]')).toEqual(['rtl', 'ar']);
  await page.getByRole('button', { name: 'English' }).click();
  expect(await page.evaluate('document.documentElement.dir')).toBe('ltr');
  await page.close();
});

test('the console is served with a strict content policy; a page under /console is the console, a missing file a 404 problem, and nothing outside it is read', async () => {
  const index = await fetch(`${api.url}/console/services/anything`);
  expect(index.status).toBe(200);
  expect(index.headers.get('content-security-policy')).toContain("default-src 'self'");
  expect(index.headers.get('x-frame-options')).toBe('DENY');
  expect(await index.text()).toContain('<div id="root">');
  const missing = await fetch(`${api.url}/console/assets/nope.js`);
  expect(missing.status).toBe(404);
  expect(missing.headers.get('content-type')).toContain('application/problem+json');
  for (const sneaky of ['/console/..%2Fpackage.json', '/console/%2e%2e/%2e%2e/package.json', '/console/assets/..%2F..%2F..%2Fpackage.json', '/console/%E0%A4%A.js', '/console/a%00.js']) {
    const answer = await fetch(`${api.url}${sneaky}`);
    expect({ sneaky, status: answer.status, leaked: (await answer.text()).includes('"dependencies"') }).toEqual({ sneaky, status: 404, leaked: false });
  }
  expect((await call(api.url, 'POST', '/console/')).status).toBe(405);
});
