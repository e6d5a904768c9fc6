/**
 * Fair shares of the shared workers (decision 046). Every run the platform starts carries two things
 * Temporal's task queues read when work waits: a priority (lower goes first) and a fairness key (each key
 * gets a share of the dispatches in proportion to its weight). Activities and child runs inherit both
 * from their run. Pure.
 */
import { stableHash } from './stable-hash';

/** The fairness key of work no site asked for: schedules, reconciles, deploys. A site id never begins with `_`. */
export const PLATFORM_FAIRNESS_KEY = '_platform';

/** Temporal refuses a fairness key longer than this many bytes. */
const FAIRNESS_KEY_MAX_BYTES = 64;

/**
 * Temporal's priority levels: 1 goes first, 5 last (the server's default count). Someone waits on urgent
 * work; nobody waits on bulk work by the minute.
 */
export const PRIORITY = { urgent: 1, normal: 3, bulk: 5 } as const;

/** The kinds of work the platform starts, each with its priority. */
const PRIORITY_OF_WORK = {
  singleSend: PRIORITY.urgent,
  publish: PRIORITY.urgent,
  deploy: PRIORITY.urgent,
  serviceChange: PRIORITY.urgent,
  restore: PRIORITY.normal,
  certificate: PRIORITY.normal,
  callbacks: PRIORITY.normal,
  workerCheck: PRIORITY.normal,
  bulkSend: PRIORITY.bulk,
  archiveRun: PRIORITY.bulk,
  reconcile: PRIORITY.bulk,
  housekeeping: PRIORITY.bulk,
} as const;

export type WorkKind = keyof typeof PRIORITY_OF_WORK;

/** What a run is started with: Temporal's `priority` option. */
export interface FairShare {
  priorityKey: number;
  fairnessKey: string;
}

/**
 * The fairness key of a site: its id, or for an id longer than Temporal takes, its first 47 characters,
 * `~` and a hash of the whole id (site ids are ASCII, so characters are bytes).
 */
export function fairnessKeyOf(siteId: string | null | undefined): string {
  if (!siteId) return PLATFORM_FAIRNESS_KEY;
  if (siteId.length <= FAIRNESS_KEY_MAX_BYTES) return siteId;
  return `${siteId.slice(0, 47)}~${stableHash(siteId)}`;
}

/** The priority and fairness key of one piece of work, for the site that asked for it (none: the platform's own). */
export function fairShareOf(work: WorkKind, siteId?: string | null): FairShare {
  return { priorityKey: PRIORITY_OF_WORK[work], fairnessKey: fairnessKeyOf(siteId) };
}

/** Temporal takes weights from 0.001 to 1000; 1 is every key's weight until told otherwise. */
export const FAIRNESS_WEIGHT = { least: 0.001, most: 1000, standard: 1 } as const;
