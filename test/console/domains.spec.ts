import { checkScreen, expect, test } from './fixtures';

/**
 * A service's hostnames (#64) as an ADMIN manages them on its page: one added through the form waits for
 * its certificate, a malformed one is refused with the API's words while the typed name stays, one another
 * service holds is refused too, and one is removed. The services are rows in the registry, as the API's own
 * domain tests make them: the hostnames need no running container, and this test needs no Docker engine.
 */

const NAME = 'console-domains';
const OTHER = 'console-domains-other';

test("an ADMIN adds a hostname on a service's page and sees it Pending; a malformed one shows DOMAIN_INVALID and keeps what was typed; another service's shows DOMAIN_TAKEN; Remove lets one go; the section is accessible in both languages", async ({
  signIn,
  opsflow,
}) => {
  const db = opsflow.platform.db;
  for (const name of [NAME, OTHER]) {
    await db('infra.service')
      .insert({ name, slug: name, kind: 'IMAGE', dynamic: true, status: 'RUNNING', image: 'nginx:1', port: 80 })
      .onConflict('name')
      .ignore();
  }
  const other = await db('infra.service').where({ name: OTHER }).first();
  await db('infra.service_domain').insert({ hostname: 'taken.example.test', service_id: other.id }).onConflict('hostname').ignore();

  const page = await signIn('admin');
  await page.goto(`${opsflow.api.url}/console/services/${NAME}`);
  await expect(page.getByRole('heading', { name: NAME, exact: true })).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Domains', exact: true })).toBeVisible();
  await expect(page.getByText('No hostnames yet: the service answers only on its path.')).toBeVisible();

  const table = page.getByRole('table', { name: 'Domains', exact: true });
  const rowOf = (hostname: string) => table.getByRole('row').filter({ has: page.getByRole('cell', { name: hostname, exact: true }) });
  const input = page.getByRole('textbox', { name: 'Hostname to add' });
  const add = page.getByRole('button', { name: 'Add', exact: true });
  // The form's own refusals: the page's other sections may show theirs (the limits need a Docker engine).
  const form = page.locator('form').filter({ has: input });

  // The API keeps a name in lower case; a new one waits for its certificate, so it has no expiry yet.
  for (const typed of ['Shop.Example.test', 'www.shop.example.test']) {
    await input.fill(typed);
    await add.click();
    await expect(input).toHaveValue('');
  }
  await expect(rowOf('shop.example.test').getByRole('cell')).toHaveText(['shop.example.test', 'Pending', '—', '—', 'Remove']);
  await expect(rowOf('www.shop.example.test').getByRole('cell').nth(1)).toHaveText('Pending');

  // A refusal: its code and detail above, the message on the name beside the input, which keeps what was typed.
  await input.fill('bad_name.example.test');
  await add.click();
  await expect(form.getByTestId('problem-code')).toHaveText('DOMAIN_INVALID');
  await expect(form.getByRole('alert')).toContainText('A hostname is not one a service may answer on.');
  await expect(input).toHaveAttribute('aria-invalid', 'true');
  await expect(form.getByText(/^bad_name\.example\.test: each label has 1 to 63 letters/)).toBeVisible();
  await expect(input).toHaveValue('bad_name.example.test');
  await expect(table.getByRole('row')).toHaveCount(3);

  await input.fill('taken.example.test');
  await add.click();
  await expect(form.getByTestId('problem-code')).toHaveText('DOMAIN_TAKEN');
  await expect(form.getByRole('alert')).toContainText(`Another service answers on taken.example.test (service ${OTHER}).`);
  await expect(input).toHaveValue('taken.example.test');
  await checkScreen(page, 'service-domains');

  await page.getByRole('button', { name: 'Remove www.shop.example.test', exact: true }).click();
  await expect(rowOf('www.shop.example.test')).toHaveCount(0);
  await expect(rowOf('shop.example.test')).toHaveCount(1);
  const service = await db('infra.service').where({ name: NAME }).first();
  expect((await db('infra.service_domain').where({ service_id: service.id })).map((row: { hostname: string }) => row.hostname)).toEqual(['shop.example.test']);
});
