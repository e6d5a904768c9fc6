/**
 * The Temporal floor beneath a publish: the least a workflow can do on the same server. No platform code:
 * no codec, no database, no HTTP. bench/publish sets the platform's publishes beside these.
 */
import { condition, defineUpdate, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type * as activities from './activities';

const { markDone } = proxyLocalActivities<typeof activities>({ startToCloseTimeout: '10 seconds' });

/** The floor beneath a publish with no policy: one local activity. */
export async function oneLocalActivity(id: string): Promise<string> {
  return markDone(id);
}

export const decideUpdate = defineUpdate<string, [string]>('decide');

/** The floor beneath a publish through one approval stage: one validated Update, then two local activities. */
export async function oneValidatedUpdate(id: string): Promise<string> {
  let decision: string | null = null;
  setHandler(
    decideUpdate,
    (given) => {
      decision = given;
      return given;
    },
    {
      validator: (given) => {
        if (given !== 'APPROVED' && given !== 'REJECTED') throw new Error(`not a decision: ${given}`);
      },
    },
  );
  await condition(() => decision !== null);
  await markDone(id);
  return markDone(`${id}:${decision}`);
}
