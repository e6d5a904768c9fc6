import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './slots';
import { RunningJaeger, startJaeger } from '../../scripts/platform/jaeger';
import { waitUntil } from './wait';

/** One span of a trace as Jaeger's API gives it, with the service that made it. */
export interface TracedSpan {
  service: string;
  name: string;
  spanId: string;
  parentId: string | null;
  tags: Record<string, unknown>;
}

/** A real Jaeger for one test file, on free loopback ports. */
export async function startTestJaeger(): Promise<RunningJaeger> {
  // Its log kept, so that a Jaeger that will not start says why.
  const logFile = path.join(os.tmpdir(), `opsflow-test-jaeger-${process.pid}.log`);
  return startJaeger({ otlpPort: await freePort(), queryPort: await freePort(), maxTraces: 1000, logFile });
}

/** A new trace context, as a caller in an organisation's own trace would send it: sampled. */
export function newTraceparent(): { traceId: string; traceparent: string } {
  const traceId = crypto.randomBytes(16).toString('hex');
  return { traceId, traceparent: `00-${traceId}-${crypto.randomBytes(8).toString('hex')}-01` };
}

interface JaegerTrace {
  spans: Array<{
    spanID: string;
    operationName: string;
    processID: string;
    references: Array<{ refType: string; spanID: string }>;
    tags: Array<{ key: string; value: unknown }>;
  }>;
  processes: Record<string, { serviceName: string }>;
}

/** The spans of one trace, read from Jaeger's API now (none while it has not seen the trace). */
export async function spansOf(jaeger: RunningJaeger, traceId: string): Promise<TracedSpan[]> {
  const answer = await fetch(`${jaeger.queryUrl}/api/traces/${traceId}`);
  if (answer.status === 404) return [];
  const body = (await answer.json()) as { data: JaegerTrace[] | null };
  return (body.data ?? []).flatMap((trace) =>
    trace.spans.map((span) => ({
      service: trace.processes[span.processID]?.serviceName ?? '?',
      name: span.operationName,
      spanId: span.spanID,
      parentId: span.references.find((reference) => reference.refType === 'CHILD_OF')?.spanID ?? null,
      tags: Object.fromEntries(span.tags.map((tag) => [tag.key, tag.value])),
    })),
  );
}

/** Waits until the trace holds what `complete` wants (spans arrive in batches from each process), and answers its spans. */
export async function traceOnceComplete(jaeger: RunningJaeger, traceId: string, complete: (spans: TracedSpan[]) => boolean): Promise<TracedSpan[]> {
  let spans: TracedSpan[] = [];
  await waitUntil(
    `trace ${traceId} to be complete in Jaeger`,
    async () => {
      spans = await spansOf(jaeger, traceId);
      return complete(spans);
    },
    { timeoutMs: 60000, intervalMs: 500 },
  ).catch((error: Error) => {
    throw new Error(`${error.message}; it holds: ${spans.map((span) => `${span.service} ${span.name}`).join(', ')}`);
  });
  return spans;
}
