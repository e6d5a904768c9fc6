import { randomUUID } from 'node:crypto';
import { Knex } from 'knex';
import { INSTANCE_TABLE, InstanceRow } from './registry';
import { ServiceEvent, ServiceEventKind } from '../../domain/deploy';

export const SERVICE_EVENT_TABLE = 'infra.service_event';

export interface ServiceEventRow {
  id: string;
  service_name: string;
  instance_id: string | null;
  kind: ServiceEventKind;
  detail: string;
  at: Date;
}

/** Adds events to a service's history; one recorded before (same key) is left as it was. */
export async function recordServiceEvents(db: Knex, serviceName: string, events: ServiceEvent[]): Promise<void> {
  if (events.length === 0) return;
  await db(SERVICE_EVENT_TABLE)
    .insert(
      events.map((event) => ({
        service_name: serviceName,
        instance_id: event.instanceId,
        kind: event.kind,
        detail: event.detail,
        dedupe_key: event.dedupeKey,
      })),
    )
    .onConflict('dedupe_key')
    .ignore();
}

/** A service's latest events, newest first. */
export async function serviceEvents(db: Knex, args: { serviceName: string; limit: number }): Promise<ServiceEventRow[]> {
  return db<ServiceEventRow>(SERVICE_EVENT_TABLE)
    .where({ service_name: args.serviceName })
    .orderBy([
      { column: 'at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(args.limit);
}

/**
 * What a survey saw of a running instance's health check. A change from what it saw last (passing to failing,
 * or back) is recorded once as an UNHEALTHY or HEALTHY event, in the transaction that records the change, so
 * a survey repeated after a crash finds it done and records nothing twice. Answers whether it changed.
 */
export async function recordHealthSeen(db: Knex, args: { serviceName: string; instanceId: string; passing: boolean; detail: string }): Promise<boolean> {
  return db.transaction(async (trx) => {
    const changed = (await trx<InstanceRow>(INSTANCE_TABLE)
      .where({ id: args.instanceId })
      .modify((query) => (args.passing ? query.whereNotNull('failing_since') : query.whereNull('failing_since')))
      .update({ failing_since: args.passing ? null : trx.fn.now() })
      .returning(['failing_since'])) as Array<Pick<InstanceRow, 'failing_since'>>;
    if (changed.length === 0) return false;
    await recordServiceEvents(trx, args.serviceName, [
      {
        kind: args.passing ? 'HEALTHY' : 'UNHEALTHY',
        instanceId: args.instanceId,
        detail: args.detail,
        // The conditional update above is what makes this once: the key only has to be new.
        dedupeKey: `${args.passing ? 'recovered' : 'unhealthy'}:${args.instanceId}:${randomUUID()}`,
      },
    ]);
    return true;
  });
}
