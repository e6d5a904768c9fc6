import fs from 'node:fs';
import { Page } from '@playwright/test';
import { buildJar } from '../deploy/jars';
import { checkScreen, expect, test } from './fixtures';

/**
 * Flow (a): a JAR dropped on the Deploy Service form reaches RUNNING, is scaled to 2 and its logs appear;
 * then the services dashboard, the service's history and its undeploy, all through the console.
 */

/** Drops a file on an element the way a person's drag and drop does: a `drop` event carrying the file. */
async function dropFile(page: Page, target: ReturnType<Page['getByLabel']>, file: string, name: string) {
  const transfer = await page.evaluateHandle(
    ({ base64, fileName }) => {
      const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
      const data = new DataTransfer();
      data.items.add(new File([bytes], fileName, { type: 'application/java-archive' }));
      return data;
    },
    { base64: fs.readFileSync(file).toString('base64'), fileName: name },
  );
  await target.dispatchEvent('drop', { dataTransfer: transfer });
}

test("(a) a JAR dropped on Deploy Service reaches RUNNING, follows its logs, is scaled to 2 and shows both instances' logs, is redeployed and rolled back, and is undeployed after a confirmation", async ({
  signIn,
}) => {
  test.setTimeout(300000);
  const page = await signIn('admin');
  const jar = await buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': 'spring.application.name=console-hello\nserver.port=8081\n' } });

  await page.getByRole('link', { name: 'Infrastructure → Deploy Service' }).click();
  await expect(page.getByRole('heading', { name: 'Deploy Service' })).toBeVisible();
  await checkScreen(page, 'deploy-service');
  await dropFile(page, page.getByLabel('Drop the JAR here, or click to choose it'), jar, 'console-hello.jar');
  await expect(page.getByText('Chosen: console-hello.jar')).toBeVisible();
  // The placeholders say what the JAR says, as the API read it; the fields stay blank, so the JAR's values are used.
  await expect(page.getByLabel('Service name')).toHaveAttribute('placeholder', 'console-hello (from the JAR)');
  await expect(page.getByLabel('Port')).toHaveAttribute('placeholder', '8081 (from the JAR)');
  await expect(page.getByLabel('Dashboard Group')).toHaveValue('platform');
  await page.getByRole('button', { name: 'Add a variable' }).click();
  await page.getByLabel('Name 1').fill('GREETING');
  await page.getByLabel('Value 1').fill('from-the-console');
  await expect(page.getByLabel('Value 1')).toHaveAttribute('type', 'password');
  await page.getByRole('button', { name: 'Deploy', exact: true }).click();

  const timeline = page.getByTestId('deploy-timeline');
  await expect(timeline).toHaveAttribute('data-status', 'RUNNING', { timeout: 180000 });
  for (const stage of ['VALIDATED', 'BUILDING_IMAGE', 'STARTING', 'HEALTH_CHECK', 'REGISTERING', 'RUNNING'])
    await expect(timeline.getByText(stage, { exact: true })).toBeVisible();
  await expect(timeline.getByRole('link', { name: 'Open the run in the Temporal Web UI' })).toHaveAttribute('href', /\/workflows\/deploy%3Aconsole-hello\//);

  await timeline.getByRole('link', { name: 'Open the service' }).click();
  await expect(page.getByRole('heading', { name: 'console-hello' })).toBeVisible();
  const instances = page.getByRole('table', { name: 'Instances' });
  await expect(instances.getByRole('row')).toHaveCount(2);
  // Follow: the lines arrive over the API's server-sent events (fetched with the token), not a one-off read.
  await page.getByRole('switch', { name: 'Follow' }).check();
  await expect(page.getByTestId('service-logs')).toContainText('listening on 8081 greeting=from-the-console');
  await page.getByRole('switch', { name: 'Follow' }).uncheck();
  await page.getByLabel('Instances wanted').fill('2');
  await page.getByRole('button', { name: 'Scale', exact: true }).click();
  await expect(instances.getByRole('row')).toHaveCount(3, { timeout: 120000 });
  await expect(page.getByText('SCALE · COMPLETED')).toBeVisible({ timeout: 60000 });

  await page.getByRole('button', { name: 'Show the last lines' }).click();
  const logs = page.getByTestId('service-logs');
  // Each line carries its instance: both instances' start-up lines are there, with the variable typed in the form.
  await expect(async () => {
    const instancesLogging = new Set(
      [...(await logs.textContent())!.matchAll(/^\[(\w+)\] hello-server .* greeting=from-the-console/gm)].map((line) => line[1]),
    );
    expect(instancesLogging.size).toBe(2);
  }).toPass({ timeout: 30000 });
  await expect(page.getByRole('table', { name: 'Deploy history' }).getByRole('row')).toHaveCount(2);
  await checkScreen(page, 'service');

  // A redeploy from the same form, then a rollback from the history: each a deploy of its own, RUNNING.
  await page.getByRole('link', { name: 'Infrastructure → Deploy Service' }).click();
  await dropFile(page, page.getByLabel('Drop the JAR here, or click to choose it'), jar, 'console-hello.jar');
  await expect(page.getByLabel('Service name')).toHaveAttribute('placeholder', 'console-hello (from the JAR)');
  await page.getByRole('button', { name: 'Replace the running service (redeploy)' }).click();
  await page.getByRole('button', { name: 'Deploy', exact: true }).click();
  await expect(timeline).toHaveAttribute('data-status', 'RUNNING', { timeout: 180000 });
  await timeline.getByRole('link', { name: 'Open the service' }).click();
  const history = page.getByRole('table', { name: 'Deploy history' });
  await expect(history.getByRole('row')).toHaveCount(3);
  await expect(history.getByRole('row').nth(1)).toContainText('console-hello:2');
  // The redeploy is RUNNING before its run ends (the old instances drain): until then the API answers
  // DEPLOYMENT_IN_PROGRESS, shown as it words it, and the operator tries again.
  await expect(async () => {
    await history
      .getByRole('row', { name: /console-hello:1/ })
      .getByRole('button', { name: 'Roll back to this' })
      .click();
    await expect(history.getByRole('row')).toHaveCount(4, { timeout: 2000 });
  }).toPass({ timeout: 60000 });
  await expect(async () => {
    await page.getByRole('button', { name: 'Refresh: Deploy history' }).click();
    await expect(history.getByRole('row').nth(1)).toContainText(/console-hello:1\s*RUNNING/, { timeout: 1000 });
  }).toPass({ timeout: 180000 });

  await page.getByRole('link', { name: 'Infrastructure → Services' }).click();
  const platformGroup = page.getByRole('table', { name: 'Services: platform' });
  await expect(platformGroup.getByRole('row', { name: /console-hello/ })).toContainText('2 / 2');
  await expect(platformGroup.getByRole('row', { name: /^settings/ })).toContainText('core');
  await checkScreen(page, 'services');

  await platformGroup.getByRole('link', { name: 'console-hello' }).click();
  await page.getByRole('button', { name: 'Undeploy' }).click();
  const dialog = page.getByRole('dialog', { name: 'Undeploy this service?' });
  await dialog.getByRole('button', { name: 'Undeploy' }).click();
  await expect(page.getByTestId('undeployed')).toHaveText('console-hello is undeployed: its instances, containers and images are gone.', { timeout: 120000 });
  await page.getByRole('link', { name: 'Infrastructure → Services' }).click();
  await expect(platformGroup.getByRole('link', { name: 'settings', exact: true })).toBeVisible();
  await expect(platformGroup.getByRole('link', { name: 'console-hello' })).toHaveCount(0);
});

test("a core service says why it cannot be scaled or undeployed, and offers the platform's own API docs", async ({ signIn }) => {
  const page = await signIn('admin');
  await page.getByRole('link', { name: 'Infrastructure → Services' }).click();
  await page.getByRole('table', { name: 'Services: platform' }).getByRole('link', { name: 'settings', exact: true }).click();
  await expect(page.getByText('A core service of the platform: it is managed through docker compose')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Scale' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Undeploy' })).toHaveCount(0);
  await page.getByRole('button', { name: 'API docs' }).click();
  await expect(page.getByRole('dialog')).toContainText('"openapi": "3.1.0"');
});

test('the image form: a host port shows its warning, and a privileged one is refused by the API beside the field it is about', async ({ signIn, opsflow }) => {
  const page = await signIn('admin');
  await page.getByRole('link', { name: 'Infrastructure → Deploy Service' }).click();
  await page.getByRole('tab', { name: 'From an image' }).click();
  // Required fields: their names end in Mantine's asterisk.
  await page.getByRole('textbox', { name: /^Service name/ }).fill('image-try');
  await page.getByRole('textbox', { name: /^Image/ }).fill('opsflow/jre:17');
  await page.getByRole('textbox', { name: /^Port/ }).fill('8080');
  await page.getByLabel('Host port (optional)').fill('80');
  await expect(page.getByText('A host port publishes the service on the machine: requests there bypass the gateway')).toBeVisible();
  await checkScreen(page, 'deploy-image');
  await page.getByRole('button', { name: 'Deploy', exact: true }).click();
  await expect(page.getByTestId('problem-code')).toHaveText('VALIDATION_FAILED');
  await expect(page.getByRole('alert').filter({ hasText: 'VALIDATION_FAILED' })).toContainText('body.hostPort: must be 1024 or above');
  expect(await opsflow.platform.db('infra.service').where({ name: 'image-try' })).toEqual([]);
});
