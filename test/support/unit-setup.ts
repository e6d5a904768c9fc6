import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureTimeSkippingServer } from '../../scripts/time-skipping-server';
import { writeWorkflowBundle } from '../../workers/bundle';

/**
 * The fast tier's setup, once per run before any test file: the time-skipping test server is fetched when
 * missing, and the workflows are bundled once, as the workers bundle them, for every file to share.
 */
export default async function unitSetup(): Promise<void> {
  const say = (line: string) => console.log(`[unit setup] ${line}`);
  process.env.OPSFLOW_TIME_SKIPPING_SERVER = await ensureTimeSkippingServer(say);
  const bundleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-unit-'));
  process.env.OPSFLOW_UNIT_WORKFLOW_BUNDLE = await writeWorkflowBundle(path.join(bundleDir, 'workflow-bundle.js'));
}
