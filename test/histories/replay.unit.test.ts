import fs from 'node:fs';
import path from 'node:path';
import { DeterminismViolationError } from '@temporalio/workflow';
import { InjectedSinks, Worker } from '@temporalio/worker';
import type { TraceSinks } from '../../workflows/trace-interceptors';
import { loadConfig } from '../../lib/config';
import { payloadCodecOf, platformDataConverter } from '../../temporal-config/payload-codec';
import { HISTORIES_DIR, historyFromFile } from '../support/histories';
import { quietWorkerRuntime, unitWorkflowBundle } from '../support/time-skipping';

/**
 * Every saved history (at least one of each workflow type) replays on today's workflow code: a change that would break a run still open fails here, not in
 * production. Histories recorded with older code stay beside the new ones, named after what changed since
 * (`…-by-signal.json`: publish runs from before decisions became an Update; `…-before-orphan-removal.json`:
 * deploy runs from before a deploy cleaned up after dead runs), for as long as such runs can be open.
 */
quietWorkerRuntime();

const files = fs
  .readdirSync(HISTORIES_DIR)
  .filter((name) => name.endsWith('.json'))
  .sort();

// Histories recorded since the payload codec are sealed under the development key; older ones are plaintext,
// which the codec passes through. Workers replay with the same codec.
const dataConverter = platformDataConverter(payloadCodecOf(loadConfig({ NODE_ENV: 'test' })));

// A replay needs the workers' bundle and no server: it runs in the fast tier.
const bundlePath = unitWorkflowBundle;

/** Every workflow type the workers run: the names workflows/index.ts exports, read from its text, so a new one counts at once. */
function workflowTypes(): string[] {
  const index = fs.readFileSync(path.resolve(__dirname, '..', '..', 'workflows', 'index.ts'), 'utf8');
  return [...index.matchAll(/^export \{ (\w+) \} from/gm)].map((match) => match[1]).sort();
}

test('every workflow type the workers run has a saved history: a new type without one fails here', () => {
  const types = new Set(
    files.map(
      (name) =>
        (JSON.parse(fs.readFileSync(path.join(HISTORIES_DIR, name), 'utf8')) as any).events[0].workflowExecutionStartedEventAttributes.workflowType.name,
    ),
  );
  expect(workflowTypes().length).toBeGreaterThanOrEqual(11);
  expect(workflowTypes().filter((type) => !types.has(type))).toEqual([]);
});

// The sink every worker registers for the workflows' spans (workers/tracing.ts). A replay calls no sink: a
// traced run's spans were sent when it first ran.
const TRACE_SINKS: InjectedSinks<TraceSinks> = { traces: { export: { fn: () => undefined } } };

test.each(files)('%s replays on the current workflow code without a determinism error', async (name) => {
  const history = historyFromFile(fs.readFileSync(path.join(HISTORIES_DIR, name), 'utf8'));
  const results = Worker.runReplayHistories({ workflowBundle: { codePath: bundlePath() }, replayName: name, dataConverter, sinks: TRACE_SINKS }, [
    { workflowId: name, history },
  ]);
  for await (const result of results) {
    expect(result.error).toBeUndefined();
  }
});

test('a determinism error would fail this test: a history whose commands the code does not give fails its replay', async () => {
  // The approved two-stage publish, with its callback activity renamed: the code schedules deliverCallback.
  const text = fs
    .readFileSync(path.join(HISTORIES_DIR, 'publish-two-stages-approved-by-signal.json'), 'utf8')
    .replace(/"name": "deliverCallback"/g, '"name": "deliverLetter"');
  const results = Worker.runReplayHistories({ workflowBundle: { codePath: bundlePath() }, replayName: 'tampered', dataConverter }, [
    { workflowId: 'tampered', history: historyFromFile(text) },
  ]);
  const errors = [];
  for await (const result of results) errors.push(result.error);
  expect(errors).toHaveLength(1);
  expect(errors[0]).toBeInstanceOf(DeterminismViolationError);
});
