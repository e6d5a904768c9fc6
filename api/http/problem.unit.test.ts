import fs from 'node:fs';
import path from 'node:path';
import { ServiceError, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { ErrorCatalogue, isErrorCode, PlatformError } from '../../lib/errors';
import { problemOf } from './problem';

/** One error vocabulary, from an activity's failure to the problem+json code (pure translation, no I/O). */

/**
 * The argument lists of every `ApplicationFailure.nonRetryable(…)` / `.retryable(…)` call (workflows) and
 * every `finalFailure(…)` / `retryableFailure(…)` call (activities, where the type checker holds them too).
 */
function failureCalls(text: string): string[] {
  const calls: string[] = [];
  for (const match of text.matchAll(/(?:ApplicationFailure\.(?:nonRetryable|retryable)|\b(?:finalFailure|retryableFailure))\(/g)) {
    let depth = 1;
    let end = match.index + match[0].length;
    while (depth > 0 && end < text.length) {
      if (text[end] === '(') depth++;
      else if (text[end] === ')') depth--;
      end++;
    }
    calls.push(text.slice(match.index + match[0].length, end - 1));
  }
  return calls;
}

test('every failure type an activity or workflow raises is a code of the catalogue', () => {
  const root = path.resolve(__dirname, '..', '..');
  // layer-probe-*: layers.test.ts's probes (one raises a type outside the catalogue on purpose), there for a moment.
  const files = ['activities', 'workflows', 'data', 'temporal-config'].flatMap((folder) =>
    fs
      .readdirSync(path.join(root, folder), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.startsWith('layer-probe-'))
      .map((entry) => path.join(entry.parentPath, entry.name)),
  );
  const raised = new Set<string>();
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    for (const call of failureCalls(text)) {
      // The helpers take the code first; ApplicationFailure's factories last.
      const codes = [...call.matchAll(/'([A-Z][A-Z_]+)'/g)];
      if (codes.length > 0) raised.add(/^\s*'/.test(call) ? codes[0][1] : codes[codes.length - 1][1]);
    }
    // ApplicationFailure.create({ …, type: 'CODE' }) in workflows and activities.
    if (/ApplicationFailure\.create\(/.test(text)) for (const match of text.matchAll(/\btype: '([A-Z_]+)'/g)) raised.add(match[1]);
  }
  expect(raised.size).toBeGreaterThan(10);
  expect([...raised].filter((code) => !isErrorCode(code))).toEqual([]);
});

test('the platform error answers its catalogue status and title', () => {
  const error = new PlatformError('APPROVER_ALREADY_DECIDED', 'You decided stage one.');
  expect(error.status).toBe(403);
  expect(problemOf(error)).toEqual({ code: 'APPROVER_ALREADY_DECIDED', detail: 'You decided stage one.', errors: undefined });
  expect(ErrorCatalogue.APPROVER_ALREADY_DECIDED.title).toBe('Approver already decided');
});

const failures: Array<[string, string, number, () => unknown]> = [
  ['a run already open', 'WORKFLOW_ALREADY_RUNNING', 409, () => new WorkflowExecutionAlreadyStartedError('already started', 'deploy:x', 'deployService')],
  ['a run that is not there', 'NOT_FOUND', 404, () => new WorkflowNotFoundError('not found', 'deploy:x', undefined)],
  [
    'a server that does not answer',
    'TEMPORAL_UNAVAILABLE',
    503,
    () => new ServiceError('unavailable', { cause: Object.assign(new Error('14 UNAVAILABLE'), { code: 14, details: '', metadata: {} }) }),
  ],
  [
    "an Update refused by an activity's failure",
    'DECISION_NOT_RECORDED',
    409,
    () =>
      new WorkflowUpdateFailedError(
        'failed',
        new ActivityFailure(
          'activity failed',
          'confirmDecision',
          '1',
          RetryState.NON_RETRYABLE_FAILURE,
          undefined,
          ApplicationFailure.nonRetryable('no such decision', 'DECISION_NOT_RECORDED'),
        ),
      ),
  ],
  [
    'an Update refused with a type outside the catalogue',
    'INTERNAL_ERROR',
    500,
    () => new WorkflowUpdateFailedError('failed', ApplicationFailure.nonRetryable('boom', 'SomethingElse')),
  ],
  [
    'a database that refuses connections (restarting)',
    'DATABASE_UNAVAILABLE',
    503,
    () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', address: '127.0.0.1', port: 5432 }),
  ],
  [
    'an engine socket that refuses connections is not the database',
    'INTERNAL_ERROR',
    500,
    () => Object.assign(new Error('connect ECONNREFUSED /var/run/docker.sock'), { code: 'ECONNREFUSED', address: '/var/run/docker.sock' }),
  ],
  [
    'a protocol violation (08P01: too many bind parameters) is a bug, not an outage',
    'INTERNAL_ERROR',
    500,
    () => Object.assign(new Error('SELECT bind message has 70000 parameter formats'), { code: '08P01' }),
  ],
  [
    'a database shutting down under the query',
    'DATABASE_UNAVAILABLE',
    503,
    () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
  ],
  ['a connection dropped mid-query', 'DATABASE_UNAVAILABLE', 503, () => new Error('Connection terminated unexpectedly')],
  [
    'a query the database refused (a unique violation) is not an outage',
    'INTERNAL_ERROR',
    500,
    () => Object.assign(new Error('SELECT duplicate key'), { code: '23505' }),
  ],
  ['anything else', 'INTERNAL_ERROR', 500, () => new Error('SELECT secret FROM nowhere')],
];

test.each(failures)('%s -> %s (%i), once, at the edge', (_what, code, status, error) => {
  const problem = problemOf(error());
  expect(problem.code).toBe(code);
  expect(ErrorCatalogue[problem.code].status).toBe(status);
  expect(problem.detail).not.toContain('SELECT');
});
