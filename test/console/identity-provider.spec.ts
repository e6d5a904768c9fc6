import { expect, test } from './fixtures';

/** Sign-in through the organisation's identity provider (a real OpenID Connect provider on loopback). */
test.use({ withIdentityProvider: true });

test("signing in with your organisation: to the provider's page and back, signed in with the provider's token; no development sign-in is offered", async ({
  page,
  opsflow,
}) => {
  await page.goto(`${opsflow.api.url}/console/`);
  await expect(page.getByRole('button', { name: 'Sign in with your organisation' })).toBeVisible();
  await expect(page.getByRole('group', { name: 'Sign in as a directory user (development)' })).toHaveCount(0);
  await page.getByRole('button', { name: 'Sign in with your organisation' }).click();
  await expect(page.getByRole('heading', { name: 'Example identity provider' })).toBeVisible();
  expect(new URL(page.url()).searchParams.get('code_challenge_method')).toBe('S256');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByText('Signed in as Ada from the IdP')).toBeVisible();
  // The code is gone from the address, and the token (the provider's RS256 one) is in this tab only.
  expect(new URL(page.url()).search).toBe('');
  expect(await page.context().cookies()).toEqual([]);
  const token = (await page.evaluate(() => sessionStorage.getItem('opsflow.token')))!;
  expect(JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString())).toEqual(expect.objectContaining({ alg: 'RS256' }));
  // Through the edge, which verifies the provider's tokens itself.
  await page.getByRole('link', { name: 'Infrastructure → Services' }).click();
  await expect(page.getByRole('table', { name: 'Services: platform' })).toBeVisible();
});

test('a code brought back to a tab that did not start the sign-in (another state) is not used', async ({ page, opsflow }) => {
  const asked = opsflow.identityProvider!.tokenRequests.length;
  await page.goto(`${opsflow.api.url}/console/?code=stolen-code&state=someone-elses`);
  await expect(page.getByRole('alert')).toContainText('This sign-in was not started from this tab');
  expect(new URL(page.url()).search).toBe('');
  expect(opsflow.identityProvider!.tokenRequests.length).toBe(asked);
  await expect(page.getByText(/^Signed in as/)).toHaveCount(0);
});
