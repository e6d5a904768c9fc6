import pg from 'pg';
import { Knex } from 'knex';
import { edgeServices } from './registry';
import { domainsByService } from './domains';
import { servedCertificates } from './certificates';
import { SecretKeys } from '../../lib/secrets';

/**
 * Calls `changed` whenever the service registry changes (the `opsflow_registry` notification of migration
 * 017), on a connection of its own. A lost connection is opened again after a second, and `changed` is
 * called then too, as changes may have been missed meanwhile.
 */
export function onRegistryChanges(databaseUrl: string, changed: () => void, onError: (error: unknown) => void): { close(): Promise<void> } {
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = async () => {
    const next = new pg.Client({ connectionString: databaseUrl });
    next.on('notification', () => changed());
    next.on('error', (error) => {
      onError(error);
      void next.end().catch(() => undefined);
      if (!closed) retry = setTimeout(() => void connect(), 1000);
    });
    try {
      await next.connect();
      await next.query('listen opsflow_registry');
      client = next;
      changed();
    } catch (error) {
      onError(error);
      await next.end().catch(() => undefined);
      if (!closed) retry = setTimeout(() => void connect(), 1000);
    }
  };
  void connect();
  return {
    close: async () => {
      closed = true;
      clearTimeout(retry);
      await client?.end().catch(() => undefined);
    },
  };
}

/**
 * The registry as the edge's control plane reads it (edge/control-plane.ts): its services, the certificates
 * it serves (keys unsealed with `keys`; `unreadable` hears of a key none opens), and word of each change.
 */
export function registryForEdge(db: Knex, databaseUrl: string, keys: SecretKeys, unreadable: (hostname: string) => void = () => undefined) {
  return {
    services: async () => {
      const [services, domains] = await Promise.all([edgeServices(db), domainsByService(db)]);
      return services.map((service) => ({ ...service, domains: domains.get(service.name) ?? [] }));
    },
    certificates: () => servedCertificates(db, keys, unreadable),
    onChanges: (changed: () => void, interrupted: (error: unknown) => void) => onRegistryChanges(databaseUrl, changed, interrupted),
  };
}
