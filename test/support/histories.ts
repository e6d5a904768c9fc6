import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { TemporalHandle } from '../../temporal-config/client';
import { waitUntil } from './wait';

type History = temporal.api.history.v1.IHistory;

/** Saved histories of the long-lived workflows, replayed by test/histories/replay.unit.test.ts. */
export const HISTORIES_DIR = path.resolve(__dirname, '..', 'histories');

// The History message's own conversion (longs and enums as strings, bytes as base64). The SDK's
// historyToJSON cannot be used here: @temporalio/common and @temporalio/proto each bring their own copy of
// protobufjs in this tree, and its proto3-JSON writer refuses the other copy's types.
const HistoryMessage = temporal.api.history.v1.History;

export function historyToFile(history: History): string {
  return `${JSON.stringify(HistoryMessage.toObject(HistoryMessage.fromObject(history), { longs: String, enums: String, bytes: String }), null, 1)}\n`;
}

export function historyFromFile(text: string): History {
  return HistoryMessage.fromObject(JSON.parse(text));
}

/**
 * With RECORD_HISTORIES=1, saves the run's history as `test/histories/{name}.json` so that the replay test
 * keeps the workflow's code able to continue it. Refresh with
 * `RECORD_HISTORIES=1 npm test -- <the test file>` after a workflow change, and keep the older files
 * for as long as runs started on the older code can still be open.
 */
export async function recordHistory(handle: TemporalHandle, args: { workflowId: string; runId?: string; name: string }): Promise<void> {
  if (!process.env.RECORD_HISTORIES) return;
  const history = await handle.client.workflow.getHandle(args.workflowId, args.runId).fetchHistory();
  fs.mkdirSync(HISTORIES_DIR, { recursive: true });
  fs.writeFileSync(path.join(HISTORIES_DIR, `${args.name}.json`), historyToFile(history));
}

/**
 * With RECORD_HISTORIES=1, saves the history of the newest closed run of `workflowType` as `{name}.json`:
 * for a run a schedule started, whose id the test does not know.
 */
export async function recordNewestHistory(handle: TemporalHandle, args: { workflowType: string; name: string }): Promise<void> {
  if (!process.env.RECORD_HISTORIES) return;
  // The run may still be closing, and the list follows the runs a moment behind.
  const run = await waitUntil(
    `a closed run of ${args.workflowType} to record`,
    async () => {
      for await (const closed of handle.client.workflow.list({ query: `WorkflowType='${args.workflowType}' AND ExecutionStatus!='Running'` })) return closed;
      return null;
    },
    { timeoutMs: 60000, intervalMs: 500 },
  );
  await recordHistory(handle, { workflowId: run.workflowId, runId: run.runId, name: args.name });
}
