import fs from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { TemporalHandle } from '../../temporal-config/client';

/** Saved histories of the long-lived workflows, replayed by test/histories/replay.test.ts. */
export const HISTORIES_DIR = path.resolve(__dirname, '..', 'histories');

/**
 * With RECORD_HISTORIES=1, saves the run's history as `test/histories/{name}.json` so that the replay test
 * keeps the workflow's code able to continue it. Refresh with
 * `RECORD_HISTORIES=1 npm test -- <the test file>` after a workflow change, and keep the older files
 * for as long as runs started on the older code can still be open.
 */
export async function recordHistory(temporal: TemporalHandle, args: { workflowId: string; runId?: string; name: string }): Promise<void> {
  if (!process.env.RECORD_HISTORIES) return;
  const history = await temporal.client.workflow.getHandle(args.workflowId, args.runId).fetchHistory();
  fs.mkdirSync(HISTORIES_DIR, { recursive: true });
  fs.writeFileSync(path.join(HISTORIES_DIR, `${args.name}.json`), `${historyToJSON(history)}\n`);
}
