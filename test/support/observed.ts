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

/**
 * The text of every payload in a `temporal workflow show --output json` history (payloads are base64 there,
 * markers' details included), to search for what a run recorded.
 */
export function decodedPayloads(shown: string): string {
  const texts: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === 'data' && typeof value === 'string') texts.push(Buffer.from(value, 'base64').toString('utf8'));
        else walk(value);
      }
    }
  };
  walk(JSON.parse(shown));
  return texts.join('\n');
}
