import { Knex } from 'knex';
import { conflict } from '../../lib/errors';
import { CertificateSource, CertificateState } from '../../domain/certificates';
import { SERVICE_TABLE } from './registry';
import { CERTIFICATE_TABLE, ensureCertificateRows } from './certificates';

export const DOMAIN_TABLE = 'infra.service_domain';

/** A service's hostname with its certificate's state (infra.certificate, 041). */
export interface DomainRow {
  hostname: string;
  state: CertificateState;
  source: CertificateSource;
  not_after: Date | null;
  problem: string | null;
}

/** A service's hostnames, in name order, each with its certificate's state. */
export async function domainsOf(db: Knex, serviceId: string): Promise<DomainRow[]> {
  return (await db(`${DOMAIN_TABLE} as d`)
    .leftJoin(`${CERTIFICATE_TABLE} as c`, 'c.hostname', 'd.hostname')
    .where('d.service_id', serviceId)
    .orderBy('d.hostname')
    .select(
      'd.hostname',
      db.raw(`coalesce(c.state, 'PENDING') as state`),
      db.raw(`coalesce(c.source, 'ACME') as source`),
      'c.not_after',
      'c.problem',
    )) as DomainRow[];
}

/**
 * Makes `hostnames` the service's whole list: the ones it no longer names are let go, new ones are taken,
 * the ones it keeps keep their certificate state. All or nothing: a name another service holds is 409
 * DOMAIN_TAKEN and changes nothing. The table's key decides between two services asking at once.
 */
export async function setDomainsOf(db: Knex, serviceId: string, hostnames: string[]): Promise<DomainRow[]> {
  return db.transaction(async (trx) => {
    // A name let go takes its certificate with it (the table's trigger, 041).
    await trx(DOMAIN_TABLE).where({ service_id: serviceId }).whereNotIn('hostname', hostnames).delete();
    if (hostnames.length > 0) {
      await trx(DOMAIN_TABLE)
        .insert(hostnames.map((hostname) => ({ hostname, service_id: serviceId })))
        .onConflict('hostname')
        .ignore();
      const held = (await trx(`${DOMAIN_TABLE} as d`)
        .join(`${SERVICE_TABLE} as s`, 's.id', 'd.service_id')
        .whereIn('d.hostname', hostnames)
        .whereNot('d.service_id', serviceId)
        .select('d.hostname', 's.name')) as Array<{ hostname: string; name: string }>;
      if (held.length > 0) {
        const named = held.map((row) => `${row.hostname} (service ${row.name})`).join(', ');
        throw conflict('DOMAIN_TAKEN', `Another service answers on ${named}.`);
      }
    }
    await ensureCertificateRows(trx, hostnames);
    return domainsOf(trx, serviceId);
  });
}

/** Every service's hostnames, by service name: for the edge's routes. */
export async function domainsByService(db: Knex): Promise<Map<string, string[]>> {
  const rows = (await db(`${DOMAIN_TABLE} as d`)
    .join(`${SERVICE_TABLE} as s`, 's.id', 'd.service_id')
    .select('s.name', 'd.hostname')
    .orderBy('d.hostname')) as Array<{ name: string; hostname: string }>;
  const byService = new Map<string, string[]>();
  for (const row of rows) byService.set(row.name, [...(byService.get(row.name) ?? []), row.hostname]);
  return byService;
}
