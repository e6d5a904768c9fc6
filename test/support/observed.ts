/** What secret-leak tests read back: the API's log lines, and a run's history as `temporal workflow show` prints it. */
import { execFileSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { createLogger, Logger } from '../../lib/logger';
import { findTemporalCli } from '../../temporal-config/temporal-cli';
import { TestPlatform } from './platform';

/** A debug-level API logger whose every line is kept in `lines`. */
export function capturedLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) });
  return { logger: createLogger({ level: 'debug', name: 'api', destination }), lines };
}

/** `temporal workflow show --output json` of a run (the latest when no run id), as an operator would read it. */
export function workflowShow(platform: TestPlatform, workflowId: string, runId?: string): string {
  const cli = findTemporalCli();
  if (!cli) throw new Error('the Temporal CLI is needed to read the history as `temporal workflow show` does');
  const run = runId ? ['--run-id', runId] : [];
  return execFileSync(cli.path, ['workflow', 'show', '--workflow-id', workflowId, ...run, '--address', platform.config.temporalAddress, '--namespace', platform.config.temporalNamespace, '--output', 'json']).toString();
}
