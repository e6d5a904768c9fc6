import { Page } from '@playwright/test';
import { call } from '../support/http';
import { waitUntil } from '../support/wait';
import { buildJar, postJar } from '../deploy/jars';
import { checkScreen, ConsolePlatform, expect, test } from './fixtures';

/**
 * A canary rollout as an operator follows it in the console: the step and share, both versions' figures
 * against the thresholds, then promote now; a second rollout aborted after a confirmation shows REVERTED.
 */

const NAME = 'console-canary';

async function deploy(opsflow: ConsolePlatform, version: string, rollout?: Record<string, unknown>) {
  const token = await opsflow.tokenOf('admin');
  const jar = await buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': `spring.application.name=${NAME}\n` } });
  const fields: Record<string, string> = { ENV_VERSION: version, ...(rollout ? { redeploy: 'true', rollout: JSON.stringify(rollout) } : {}) };
  const accepted = await postJar({ apiUrl: opsflow.api.url, token, jar, fields });
  expect(accepted.status).toBe(202);
  return accepted.body as { deploymentId: string };
}

const statusOf = async (opsflow: ConsolePlatform, deploymentId: string) =>
  (await call(opsflow.api.url, 'GET', `/api/infra/deployments/${deploymentId}`, { token: await opsflow.tokenOf('admin') })).body;

async function untilStatus(opsflow: ConsolePlatform, deploymentId: string, status: string) {
  await waitUntil(`deployment ${deploymentId} ${status}`, async () => (await statusOf(opsflow, deploymentId)).status === status, 180000);
}

async function untilCanaryStep(opsflow: ConsolePlatform, deploymentId: string) {
  await waitUntil('the first canary step', async () => (await statusOf(opsflow, deploymentId)).rolloutState?.step === 0, 180000);
}

// Long pauses: the operator decides before the judge does (with no traffic, the judge would wait for requests).
const patient = { steps: [10, 100], pauseSeconds: 600, maxErrorRate: 0.02, maxP99Ms: 800, minRequests: 50 };

test("(f) a canary's progress on the service page: its step, both versions' figures against the thresholds; promote now ends RUNNING; abort, after a confirmation, shows REVERTED", async ({
  signIn,
  opsflow,
}) => {
  test.setTimeout(420000);
  const first = await deploy(opsflow, '1');
  await untilStatus(opsflow, first.deploymentId, 'RUNNING');
  const page: Page = await signIn('admin');

  const promoted = await deploy(opsflow, '2', patient);
  await untilCanaryStep(opsflow, promoted.deploymentId);
  await page.goto(`${opsflow.api.url}/console/services/${NAME}`);
  await expect(page.getByRole('heading', { name: 'Rollout progress' })).toBeVisible();
  await expect(page.getByTestId('rollout-step')).toHaveText('Step 1 of 2: 10% of requests to the new version');
  const figures = page.getByRole('table', { name: 'Canary figures' });
  await expect(figures.getByRole('row', { name: /New version \(canary\)/ })).toBeVisible();
  await expect(figures.getByRole('row', { name: /Current version \(stable\)/ })).toBeVisible();
  await expect(figures.getByRole('row', { name: /Thresholds/ })).toContainText('at most 0.02');
  await checkScreen(page, 'service-rollout');
  await page.getByRole('button', { name: 'Promote now' }).click();
  await expect(page.getByTestId('rollout-step')).toHaveText('Promoted: the new version takes every request.');
  await untilStatus(opsflow, promoted.deploymentId, 'RUNNING');

  // The deploy run drains and stops the replaced instance before another deploy of the service is taken.
  const aborted = await waitUntil('the next rollout accepted', async () => {
    const token = await opsflow.tokenOf('admin');
    const jar = await buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': `spring.application.name=${NAME}\n` } });
    const answer = await postJar({ apiUrl: opsflow.api.url, token, jar, fields: { ENV_VERSION: '3', redeploy: 'true', rollout: JSON.stringify(patient) } });
    return answer.status === 202 ? (answer.body as { deploymentId: string }) : null;
  });
  await untilCanaryStep(opsflow, aborted.deploymentId);
  await expect(page.getByTestId('rollout-step')).toHaveText('Step 1 of 2: 10% of requests to the new version');
  await page.getByRole('button', { name: 'Abort rollout' }).click();
  const dialog = page.getByRole('dialog', { name: 'Abort this rollout?' });
  await dialog.getByRole('button', { name: 'Abort rollout' }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'The rollout was reverted at CANARY' })).toBeVisible({ timeout: 60000 });
  expect((await statusOf(opsflow, aborted.deploymentId)).status).toBe('REVERTED');
  await expect(page.getByRole('button', { name: 'Promote now' })).toHaveCount(0);
});
