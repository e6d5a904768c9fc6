import { Knex } from 'knex';
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
