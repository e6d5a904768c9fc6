import { observabilityConfig } from '../config/observability';
import type { StartedTracing } from './sdk';

/**
 * Starts tracing in this process when OTEL_EXPORTER_OTLP_ENDPOINT says where traces go; null otherwise.
 * A process imports the module that calls this before any other, since the SDK patches `pg` and `http` as
 * they load. A setting it cannot read leaves tracing off here: the process's own loadConfig reports it.
 */
export function startTracing(serviceName: string): StartedTracing | null {
  let tracing;
  try {
    tracing = observabilityConfig(process.env).tracing;
  } catch {
    return null;
  }
  if (!tracing) return null;
  // Loaded only when tracing is on: the SDK and its instrumentations weigh about 30 MiB in each process.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startTracingSdk } = require('./sdk') as typeof import('./sdk');
  return startTracingSdk(serviceName, tracing);
}
