import { call } from '../support/http';
import { checkScreen, expect, test } from './fixtures';

/** Signing in, the console's language and direction, and how the console itself is served. */

test('an ADMIN signs in as a directory user; the token is kept in this tab, never in a cookie', async ({ page, signIn, opsflow }) => {
  await page.goto(`${opsflow.api.url}/console/`);
  await expect(page.getByRole('button', { name: /^Ada Admin/ })).toBeVisible();
  await checkScreen(page, 'sign-in');
  await signIn('admin');
  expect(await page.context().cookies()).toEqual([]);
  expect(await page.evaluate("sessionStorage.getItem('opsflow.token')")).toMatch(/^ey/);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  expect(await page.evaluate("sessionStorage.getItem('opsflow.token')")).toBeNull();
});

test("a pasted token signs in; a forged one gets the API's 401, shown with its title and code", async ({ page, opsflow }) => {
  await page.goto(`${opsflow.api.url}/console/`);
  await page.getByLabel('Or paste a token').fill('eyJhbGciOiJub25lIn0.eyJzdWIiOiJldmUiLCJyb2xlcyI6WyJBRE1JTiJdfQ.');
  await page.getByRole('button', { name: 'Use this token' }).click();
  await expect(page.getByRole('alert')).toContainText('UNAUTHENTICATED');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('Or paste a token').fill(await opsflow.tokenOf('editor'));
  await page.getByRole('button', { name: 'Use this token' }).click();
  await expect(page.getByText('Signed in as Eddie Editor')).toBeVisible();
});

test('the language switch turns the console to Arabic, laid out right to left, and back', async ({ signIn }) => {
  const page = await signIn('admin');
  await page.getByRole('button', { name: 'العربية' }).click();
  await expect(page.locator('html')).toHaveAttribute('dir', 'rtl');
  await expect(page.locator('html')).toHaveAttribute('lang', 'ar');
  await page.getByRole('button', { name: 'English' }).click();
  await expect(page.locator('html')).toHaveAttribute('dir', 'ltr');
});

test('the console is served with a strict content policy; a page under /console is the console, a missing file a 404 problem, and nothing outside it is read', async ({
  opsflow,
}) => {
  const { api } = opsflow;
  const index = await fetch(`${api.url}/console/services/anything`);
  expect(index.status).toBe(200);
  expect(index.headers.get('content-security-policy')).toContain("default-src 'self'");
  expect(index.headers.get('x-frame-options')).toBe('DENY');
  expect(await index.text()).toContain('<div id="root">');
  const missing = await fetch(`${api.url}/console/assets/nope.js`);
  expect(missing.status).toBe(404);
  expect(missing.headers.get('content-type')).toContain('application/problem+json');
  for (const sneaky of [
    '/console/..%2Fpackage.json',
    '/console/%2e%2e/%2e%2e/package.json',
    '/console/assets/..%2F..%2F..%2Fpackage.json',
    '/console/%E0%A4%A.js',
    '/console/a%00.js',
  ]) {
    const answer = await fetch(`${api.url}${sneaky}`);
    expect({ sneaky, status: answer.status, leaked: (await answer.text()).includes('"dependencies"') }).toEqual({ sneaky, status: 404, leaked: false });
  }
  expect((await call(api.url, 'POST', '/console/')).status).toBe(405);
});

test('the keyboard alone signs in and moves between sections, focus visible on what it reaches', async ({ page, opsflow }) => {
  await page.goto(`${opsflow.api.url}/console/`);
  await expect(page.getByRole('button', { name: /^Ada Admin/ })).toBeVisible();
  // Tab until the first directory user's button has the focus, then Enter.
  for (
    let presses = 0;
    presses < 10 && !(await page.getByRole('button', { name: /^Ada Admin/ }).evaluate((button) => button === document.activeElement));
    presses++
  )
    await page.keyboard.press('Tab');
  await expect(page.getByRole('button', { name: /^Ada Admin/ })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByText('Signed in as Ada Admin')).toBeVisible();
  // The button pressed is gone with the sign-in page: the focus goes to the sections just shown, not to wherever the
  // first screen's list ends (a list of every service deployed so far once put Content more than 15 presses away).
  const sections = page.getByRole('navigation', { name: 'Console sections' });
  await expect(sections).toBeFocused();
  const content = sections.getByRole('link', { name: 'Content' });
  for (let presses = 0; presses < 15 && !(await content.evaluate((link) => link === document.activeElement)); presses++) await page.keyboard.press('Tab');
  await expect(content).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { name: 'Content · pages' })).toBeVisible();
  await expect(content).toHaveAttribute('aria-current', 'page');
});
