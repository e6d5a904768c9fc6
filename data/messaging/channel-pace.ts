import { Knex } from 'knex';

export const CHANNEL_PACE_TABLE = 'settings.channel_pace';

/**
 * Reserves one message's moment on a configuration limited to `ratePerSecond` with `burst`, shared by every
 * worker (the generic cell rate algorithm, one atomic upsert on the configuration's pace row): answers how
 * long to wait before sending it (0: now), or null when that moment is more than `maxWaitMs` away, in which
 * case nothing is reserved. The database's clock decides, so workers whose clocks differ still agree.
 */
export async function reserveTurn(db: Knex, args: { configId: string; ratePerSecond: number; burst: number; maxWaitMs: number }): Promise<number | null> {
  const interval = 1 / args.ratePerSecond;
  // How far ahead of the steady rate a burst may run.
  const tolerance = (Math.max(1, args.burst) - 1) * interval;
  const { rows } = await db.raw<{ rows: Array<{ wait_seconds: number }> }>(
    `with clock as (select clock_timestamp() as now)
     insert into ${CHANNEL_PACE_TABLE} as pace (config_id, theoretical_arrival)
       select ?, clock.now + make_interval(secs => ?) from clock
     on conflict (config_id) do update
       set theoretical_arrival = greatest(pace.theoretical_arrival, (select now from clock)) + make_interval(secs => ?)
       where pace.theoretical_arrival - make_interval(secs => ?) - (select now from clock) <= make_interval(secs => ?)
     returning greatest(0, extract(epoch from pace.theoretical_arrival - make_interval(secs => ?) - (select now from clock)))::float as wait_seconds`,
    [args.configId, interval, interval, tolerance, args.maxWaitMs / 1000, interval + tolerance],
  );
  return rows.length === 0 ? null : Math.ceil(rows[0].wait_seconds * 1000);
}

/**
 * A configuration's turn under its rate limit, waited for (no limit: at once); false when none can be had
 * within `maxWaitMs` (nothing reserved then). A burst left unset is one second of the rate.
 *
 * With `bookAheadMs` (bulk sends), a turn is booked no further ahead than that: while the configuration's
 * turns are taken beyond it, the message waits and asks again. So bulk sends never hold more than that much
 * of the configuration's future, and a single send, which books as far as its attempt allows, gets a turn
 * soon after them rather than behind a whole batch.
 */
export function awaitTurnOn(db: Knex, options: { bookAheadMs?: number } = {}) {
  return async (row: { id: string; rate_per_second?: string | number | null; burst?: number | null }, maxWaitMs: number): Promise<boolean> => {
    if (row.rate_per_second === null || row.rate_per_second === undefined) return true;
    const ratePerSecond = Number(row.rate_per_second);
    const burst = row.burst ?? Math.max(1, Math.ceil(ratePerSecond));
    const until = Date.now() + maxWaitMs;
    for (;;) {
      const leftMs = until - Date.now();
      const waitMs = await reserveTurn(db, { configId: row.id, ratePerSecond, burst, maxWaitMs: Math.min(leftMs, options.bookAheadMs ?? leftMs) });
      if (waitMs !== null) {
        if (waitMs > 0) await sleep(waitMs);
        return true;
      }
      if (options.bookAheadMs === undefined || leftMs <= 0) return false;
      await sleep(Math.min(options.bookAheadMs, leftMs));
    }
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Forgets a configuration's pace: after its limit changes, turns booked under the old limit (a large burst,
 * a slow rate) must not hold the new one back.
 */
export async function forgetPace(db: Knex, configId: string): Promise<void> {
  await db(CHANNEL_PACE_TABLE).where({ config_id: configId }).delete();
}
