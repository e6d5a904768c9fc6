/** What secret-leak tests read back: the API's log lines, and a run's history as `temporal workflow show` prints it. */
import { execFileSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { createLogger, Logger } from '../../lib/logger';
import { Payload } from '@temporalio/common';
import { payloadCodecOf } from '../../temporal-config/payload-codec';
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
  return execFileSync(cli.path, [
    'workflow',
    'show',
    '--workflow-id',
    workflowId,
    ...run,
    '--address',
    platform.config.temporal.address,
    '--namespace',
    platform.config.temporal.namespace,
    '--output',
    'json',
  ]).toString();
}

/**
 * The text of every payload in a `temporal workflow show --output json` history, opened with the platform's
 * payload codec (sealed payloads are ciphertext there, the others base64; markers' details included), to
 * search for what a run recorded.
 */
export async function decodedPayloads(platform: TestPlatform, shown: string): Promise<string> {
  const sealed: Payload[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      const entry = node as { metadata?: Record<string, string>; data?: unknown };
      if (entry.metadata && typeof entry.metadata === 'object' && (typeof entry.data === 'string' || entry.data === undefined)) {
        const metadata = Object.fromEntries(Object.entries(entry.metadata).map(([key, value]) => [key, Buffer.from(value, 'base64')]));
        sealed.push({ metadata, data: Buffer.from((entry.data as string | undefined) ?? '', 'base64') });
      } else Object.values(node).forEach(walk);
    }
  };
  walk(JSON.parse(shown));
  const opened = await payloadCodecOf(platform.config).decode(sealed);
  return opened.map((payload) => Buffer.from(payload.data ?? []).toString('utf8')).join('\n');
}
