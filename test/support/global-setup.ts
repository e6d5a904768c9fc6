import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { waitUntil, succeeds } from './wait';
import { installTools } from '../../scripts/tools';
import { ensureTemporalServer } from '../../scripts/temporal-server';
import { ensurePebble } from '../../scripts/platform/pebble';
import { mailpitBinary } from '../../scripts/platform/mail-capture';
import { ensureJaeger } from '../../scripts/platform/jaeger';
import { ensureBaseImage } from '../../adapters/deploy/jre-base-image';
import { withProgress } from '../../scripts/progress';
import { TEST_BASE_IMAGE } from './slots';

const ROOT = path.resolve(__dirname, '..', '..');
const START_DEADLINE_MS = 180000;

/**
 * What the suite needs besides the system packages, installed by the suite itself as `npm start` installs
 * its own: the pinned tools (Temporal CLI, Envoy, the API fuzzer, SeaweedFS for the S3 sink), the Temporal server of cluster mode,
 * Pebble, Mailpit and Jaeger (built from the Go module proxy) and the JRE base image of JAR deploys.
 * Without a Docker engine the image is left out and the deploy tests fail saying the engine does not answer.
 */
async function installWhatTheSuiteNeeds(): Promise<void> {
  const say = (line: string) => console.log(`[setup] ${line}`);
  await installTools(['temporal', 'envoy', 'fuzzer', 'seaweedfs'], say);
  // Built once here, before test files run side by side: the cluster tests would otherwise build it twice at once.
  await ensureTemporalServer(say).catch((error: Error) =>
    say(`the Temporal server of cluster mode was not built (${error.message}): the cluster tests will fail saying so`),
  );
  // The certificate tests' ACME server, built once before files run side by side.
  await ensurePebble(say);
  // The mail capture, built once before the test platform starts it (its web UI by npm: minutes the first time).
  await withProgress('making sure Mailpit with its web UI is built', say, () => mailpitBinary());
  // The trace tests' backend (minutes the first time on a fresh machine; seconds once Go's cache has it).
  await ensureJaeger(say);
  const docker = new Docker();
  const engine = await succeeds(docker.ping());
  if (!engine) {
    say('the Docker engine does not answer: the JRE base image is not built, and the deploy tests will fail saying so');
    return;
  }
  await withProgress(`making sure the JRE base image ${TEST_BASE_IMAGE} exists`, say, () =>
    ensureBaseImage({ docker, image: TEST_BASE_IMAGE, dockerHost: process.env.DOCKER_HOST || null, say: (line) => say(`  ${line}`) }),
  );
}

/**
 * Starts the shared real components once for the run (test/support/test-platform.ts) and waits for them;
 * builds the console when stale, once, before any test file serves it (as `npm start` does).
 */
export default async function globalSetup(): Promise<void> {
  await installWhatTheSuiteNeeds();
  const consoleBuild = spawnSync(path.join(ROOT, 'node_modules', '.bin', 'tsx'), [path.join(ROOT, 'scripts', 'console.ts')], { cwd: ROOT, encoding: 'utf8' });
  if (consoleBuild.status !== 0) throw new Error(`The console did not build:\n${consoleBuild.stdout}${consoleBuild.stderr}`);
  const infoFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-run-')), 'platform.json');
  const logFile = `${infoFile}.log`;
  const out = fs.openSync(logFile, 'a');
  const child = spawn(path.join(ROOT, 'node_modules', '.bin', 'tsx'), [path.join(ROOT, 'test', 'support', 'test-platform.ts'), infoFile], {
    cwd: ROOT,
    stdio: ['ignore', out, out],
    detached: true,
  });
  (globalThis as { __opsflowPlatform?: unknown }).__opsflowPlatform = child;
  await waitUntil('the test platform to start', () => fs.existsSync(infoFile) || child.exitCode !== null, { timeoutMs: START_DEADLINE_MS }).catch(() => {
    child.kill('SIGKILL');
    throw new Error(`Test platform did not start within ${START_DEADLINE_MS / 1000} s; see ${logFile}`);
  });
  const info = fs.existsSync(infoFile) ? JSON.parse(fs.readFileSync(infoFile, 'utf8')) : { error: `exited; see ${logFile}` };
  if (info.error) throw new Error(`${info.error}\n(test platform log: ${logFile})`);
  process.env.OPSFLOW_TEST_PLATFORM = infoFile;
  console.log(`\nTest platform ready: PostgreSQL :${info.postgres.port}, Temporal ${info.temporal.address}, Mailpit :${info.mail.smtpPort}`);
}
