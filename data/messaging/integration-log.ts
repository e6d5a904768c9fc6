import { Knex } from 'knex';

export const INTEGRATION_LOG_TABLE = 'integration.integration_log';

export interface IntegrationLogEntry {
  site_id: string;
  component: string;
  operation: string | null;
  url: string;
  method: string;
  status_code: number | null;
  duration_ms: number;
  outcome: 'SUCCESS' | 'FAILED';
  request_body: string | null;
  response_body: string | null;
  error: string | null;
}

/** One row per outbound SOAP or REST call; archived as the INTEGRATION_LOG log type. */
export async function writeIntegrationLog(db: Knex, entry: IntegrationLogEntry): Promise<void> {
  await db(INTEGRATION_LOG_TABLE).insert(entry);
}

/** The integration log as an outbound call records into it (adapters/messaging/http-peer.ts). */
export const integrationLogOf = (db: Knex) => (entry: IntegrationLogEntry) => writeIntegrationLog(db, entry);
