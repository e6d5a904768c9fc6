import { startTracing } from '../lib/tracing/start';

// Imported first by api/server.ts: tracing must patch `pg` and `http` before anything loads them.
export const tracing = startTracing('opsflow-api');
