import { Locator, Page } from '@playwright/test';
import { call } from '../support/http';
import { waitUntil } from '../support/wait';
import { buildJar, postJar } from '../deploy/jars';
import { checkScreen, ConsolePlatform, expect, test } from './fixtures';

/**
 * A service's history and limits as an operator reads them on its page: the events its instances went
 * through, each instance's limits read back from the engine, and a memory limit changed through the form.
 */

const NAME = 'console-events';

async function deploy(opsflow: ConsolePlatform) {
  const token = await opsflow.tokenOf('admin');
  const jar = await buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': `spring.application.name=${NAME}\n` } });
  const accepted = await postJar({ apiUrl: opsflow.api.url, token, jar });
  expect(accepted.status).toBe(202);
  return accepted.body as { deploymentId: string };
}

async function untilRunning(opsflow: ConsolePlatform, deploymentId: string) {
  await waitUntil(
    `deployment ${deploymentId} RUNNING`,
    async () =>
      (await call(opsflow.api.url, 'GET', `/api/infra/deployments/${deploymentId}`, { token: await opsflow.tokenOf('admin') })).body.status === 'RUNNING',
    180000,
  );
}

test("a service's page shows its STARTED and HEALTHY events and each instance's limits read back from the engine; a memory limit of 300 MiB set in the form is read back on each instance and recorded as LIMITS_CHANGED; the page is accessible in both languages", async ({
  signIn,
  opsflow,
}) => {
  test.setTimeout(300000);
  const deployed = await deploy(opsflow);
  await untilRunning(opsflow, deployed.deploymentId);
  const page: Page = await signIn('admin');
  await page.goto(`${opsflow.api.url}/console/services/${NAME}`);
  await expect(page.getByRole('heading', { name: NAME, exact: true })).toBeVisible();

  const events = page.getByRole('table', { name: 'Events', exact: true });
  await expect(events.getByRole('cell', { name: 'STARTED', exact: true })).toBeVisible();
  await expect(events.getByRole('cell', { name: 'HEALTHY', exact: true })).toBeVisible();

  // One row per running instance under the header row, its memory as the engine reports it: the service's own.
  const wanted = /may use (\d+) MiB/.exec((await page.getByText(/^Each instance may use /).textContent()) ?? '')?.[1];
  expect(wanted).toMatch(/^\d+$/);
  expect(wanted).not.toBe('300');
  await expect(page.getByText("Each running instance's limits as read back from the engine, not as asked for.")).toBeVisible();
  const perInstance = page.getByRole('table', { name: 'Limits per instance', exact: true });
  const instanceRows = perInstance.getByRole('row').filter({ has: page.getByRole('cell') });
  await expect(instanceRows).not.toHaveCount(0);
  const memoryOf = (row: Locator) => row.getByRole('cell').nth(1);
  for (const row of await instanceRows.all()) await expect(memoryOf(row)).toHaveText(wanted!);
  await expect(events.getByRole('cell', { name: 'LIMITS_CHANGED', exact: true })).toHaveCount(0);

  await page.getByRole('button', { name: 'Edit limits' }).click();
  await page.getByRole('textbox', { name: 'Memory (MiB)' }).fill('300');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(page.getByText('Changed: each instance below shows the new limits as the engine reports them.')).toBeVisible();
  await expect(instanceRows).not.toHaveCount(0);
  for (const row of await instanceRows.all()) await expect(memoryOf(row)).toHaveText('300');
  await expect(events.getByRole('cell', { name: 'LIMITS_CHANGED', exact: true })).toBeVisible();
  await checkScreen(page, 'service-events');
});
