import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { buildStandIns } from '../../scripts/images';
import { ensureComposePlugin } from '../../scripts/images/compose-plugin';
import { freePort, PROJECT_ROOT } from '../../scripts/platform/children';
import { removeScopedDockerObjects } from '../support/docker-cleanup';
import { waitUntil } from '../support/wait';

/**
 * The production stack of docker-compose.yml, run as docs/production.md says: an `.env` beside it, then
 * `docker compose up -d`. The drills add only an S3 store (drill.compose.yml) and pick free ports for what
 * the file publishes. Everything the drill does to the platform goes through the edge.
 */
export interface ComposeStack {
  dir: string;
  /** The edge: the only way in. */
  baseUrl: string;
  mailpitUrl: string;
  temporalUiUrl: string;
  s3: { endpoint: string; bucket: string; accessKeyId: string; secretAccessKey: string };
  secrets: { jwtSecret: string; internalToken: string; postgresPassword: string };
  /** `docker compose …` for this stack (`input` on its stdin); answers its output, fails with it. */
  compose(args: string[], options?: ComposeOptions): Promise<string>;
  /** The same, answering its output's bytes (a dump). */
  composeBytes(args: string[]): Promise<Buffer>;
  /** `docker compose up -d` (of `release`'s tree, at `version` of the platform's image), then waits for /readyz through the edge. */
  up(options?: Omit<ComposeOptions, 'input'>): Promise<void>;
  /** Removes every container, and the volumes too when asked: the stack is gone. */
  down(options?: { volumes?: boolean }): Promise<void>;
  /** Deletes the drill's folders: the `.env`, the keys and any backup. */
  forget(): void;
  /** Removes the platform's volumes (not the S3 store's, which stands for the operator's own). */
  removePlatformVolumes(): Promise<void>;
  /** Removes what the platform deployed (containers, images, networks of its scope): compose does not know them. */
  removeDeployedServices(): Promise<void>;
  /** `docker …` against the stack's engine. */
  docker(args: string[]): Promise<string>;
}

/** The scope the compose file's platform labels its deployed services with (DEPLOY_SCOPE's default). */
const DEPLOYED_SCOPE = 'opsflow';

/**
 * Builds every image the stack runs: the stand-ins this machine needs (scripts/images.ts), then the platform's
 * own with `docker compose build`, at `version` when given. Prints each part's time.
 */
export async function buildImages(stack: ComposeStack, options: { version?: string } = {}): Promise<void> {
  let started = Date.now();
  await buildStandIns(() => undefined);
  console.log(`stand-in images ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  started = Date.now();
  await stack.compose(['build'], options);
  console.log(`platform images built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

export const DRILL_S3_BUCKET = 'archives';
/** The compose files of a tree: this one, or an older release's (its own, as its operators ran it). */
const composeFilesOf = (root: string) => [path.join(root, 'docker-compose.yml'), path.join(root, 'test', 'production', 'drill.compose.yml')];

/** Which release a compose command runs: its platform image's version and, for an older one, its own tree. */
export interface ComposeOptions {
  version?: string;
  /** An older release's tree (its compose file and build contexts); unset, this tree's. */
  release?: string;
  input?: Buffer;
}

function secret(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}

/** The `.env` docs/production.md asks for, with the drill's own choices beside it. */
function envFile(values: Record<string, string>): string {
  return `${Object.entries(values)
    .map(([name, value]) => `${name}=${value}`)
    .join('\n')}\n`;
}

/** Runs a command to its end, `input` on its stdin; answers its stdout. The error carries the output's end. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv, input?: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let errors = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk) => (errors = (errors + chunk).slice(-4000)));
    child.once('error', reject);
    child.once('exit', (code) => {
      const stdout = Buffer.concat(out);
      if (code === 0) resolve(stdout);
      else reject(new Error(`${command} ${args.join(' ')} failed (${code}):\n${stdout.toString().slice(-2000)}\n${errors}`));
    });
    child.stdin.end(input);
  });
}

/** Refuses to go on when this engine holds an `opsflow` database a drill did not make: an operator's install. */
async function refuseRealInstall(env: NodeJS.ProcessEnv): Promise<void> {
  const label = await run('docker', ['volume', 'inspect', '--format', '{{ index .Labels "org.opsflow.drill" }}', 'opsflow_pgdata'], env).then(
    (out) => out.toString().trim(),
    () => null,
  );
  if (label !== null && label !== 'true')
    throw new Error('This engine runs an opsflow stack that no drill made (its opsflow_pgdata volume): the drills would empty it, so they stop.');
}

/** The last lines of every container of the stack that exited with an error: why an `up` failed. */
async function logsOfFailed(compose: (args: string[]) => Promise<string>): Promise<string> {
  const listed = await compose(['ps', '--all', '--format', 'json']).catch(() => '');
  const failed = listed
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as { Service: string; State: string; ExitCode: number })
    .filter((container) => container.State === 'exited' && container.ExitCode !== 0);
  const logs = await Promise.all(
    failed.map(
      async (container) =>
        `--- ${container.Service} (exit ${container.ExitCode}):\n${(await compose(['logs', '--no-color', '--tail', '15', container.Service]).catch(() => ''))
          .split('\n')
          .map((line) => line.slice(0, 400))
          .join('\n')}`,
    ),
  );
  return logs.join('\n');
}

/**
 * An authority of the drill's own and the store's certificate under it (the name `seaweedfs`), made with
 * openssl in `dir`; the store's folder gets its certificate, its key and the authority's certificate only.
 */
async function storeCertificates(dir: string, storeDir: string): Promise<void> {
  const openssl = (args: string) => run('openssl', args.split(' '), process.env);
  const at = (name: string) => path.join(dir, name);
  const newKey = '-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes';
  await openssl(`req -x509 ${newKey} -days 2 -subj /CN=opsflow-drill-authority -keyout ${at('ca-key.pem')} -out ${at('ca.pem')}`);
  await openssl(`req -new ${newKey} -subj /CN=seaweedfs -keyout ${at('seaweedfs-key.pem')} -out ${at('seaweedfs.csr')}`);
  fs.writeFileSync(at('seaweedfs.ext'), 'subjectAltName=DNS:seaweedfs\n');
  await openssl(
    `x509 -req -in ${at('seaweedfs.csr')} -CA ${at('ca.pem')} -CAkey ${at('ca-key.pem')} -CAcreateserial -days 2 -extfile ${at('seaweedfs.ext')} -out ${at('seaweedfs.pem')}`,
  );
  // The store reads its key as its own user; its folder is mounted read-only and holds nothing else secret.
  for (const name of ['ca.pem', 'seaweedfs.pem', 'seaweedfs-key.pem']) {
    fs.copyFileSync(at(name), path.join(storeDir, name));
    fs.chmodSync(path.join(storeDir, name), 0o644);
  }
}

/** The S3 store's folder (what its container mounts: its keys and certificate, never the stack's .env) and its one identity. */
async function prepareStore(dir: string) {
  const s3 = { endpoint: 'https://seaweedfs:8333', bucket: DRILL_S3_BUCKET, accessKeyId: 'opsflow-archiver', secretAccessKey: secret() };
  // The drill's own folder stays its owner's (the .env, the authority's key, backups); only the store's opens.
  const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-drill-store-'));
  fs.chmodSync(storeDir, 0o755);
  await storeCertificates(dir, storeDir);
  const identity = {
    name: 'archiver',
    credentials: [{ accessKey: s3.accessKeyId, secretKey: s3.secretAccessKey }],
    actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
  };
  fs.writeFileSync(path.join(storeDir, 's3.json'), JSON.stringify({ identities: [identity] }), { mode: 0o644 });
  return { storeDir, s3 };
}

/** Compose reads variables from its own environment before the .env file: it gets none of the test's. */
function composeEnvOf(dockerConfig: string) {
  return (version?: string): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DOCKER_CONFIG: dockerConfig,
    ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
    ...(version ? { OPSFLOW_VERSION: version } : {}),
  });
}

/** Writes the stack's `.env` into `dir` and answers the stack; nothing runs until `up`. */
export async function composeStack(dir: string, options: { s3Sink?: boolean } = {}): Promise<ComposeStack> {
  const s3Sink = options.s3Sink ?? true;
  const dockerConfig = await ensureComposePlugin();
  const [edgePort, edgeTlsPort, uiPort, mailpitPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const secrets = { jwtSecret: secret(), internalToken: secret(), postgresPassword: secret() };
  const { storeDir, s3 } = await prepareStore(dir);
  const baseUrl = `http://127.0.0.1:${edgePort}`;
  const env = {
    POSTGRES_PASSWORD: secrets.postgresPassword,
    JWT_SECRET: secrets.jwtSecret,
    INTERNAL_TOKEN: secrets.internalToken,
    SECRETS_KEY: secret(),
    TEMPORAL_PAYLOAD_KEYS: `drill:${randomBytes(32).toString('base64')}`,
    PUBLIC_URL: baseUrl,
    TEMPORAL_UI_URL: `http://127.0.0.1:${uiPort}`,
    // The upgrade drill keeps archives in files: its run mid-export then needs no store's keys.
    OUTBOUND_ALLOW: s3Sink ? 'smtp:mailpit:1025,s3:seaweedfs:8333' : 'smtp:mailpit:1025',
    ARCHIVE_SINK: s3Sink ? 's3' : 'file',
    ARCHIVE_S3_ENDPOINT: s3.endpoint,
    ARCHIVE_S3_BUCKET: s3.bucket,
    EDGE_PORT: String(edgePort),
    EDGE_TLS_PORT: String(edgeTlsPort),
    TEMPORAL_UI_PORT: String(uiPort),
    MAILPIT_PORT: String(mailpitPort),
    DRILL_DIR: storeDir,
  };
  const envPath = path.join(dir, '.env');
  fs.writeFileSync(envPath, envFile(env), { mode: 0o600 });
  const composeEnv = composeEnvOf(dockerConfig);
  const composeBytes = (args: string[], options: ComposeOptions = {}) => {
    const root = options.release ?? PROJECT_ROOT;
    const files = composeFilesOf(root).flatMap((file) => ['-f', file]);
    return run('docker', ['compose', '--project-directory', root, ...files, '--env-file', envPath, ...args], composeEnv(options.version), options.input);
  };
  const compose = async (args: string[], options: ComposeOptions = {}) => (await composeBytes(args, options)).toString();
  return {
    dir,
    baseUrl,
    mailpitUrl: `http://127.0.0.1:${mailpitPort}`,
    temporalUiUrl: `http://127.0.0.1:${uiPort}`,
    s3,
    secrets,
    compose,
    composeBytes,
    async up(options = {}) {
      await compose(['up', '-d'], options).catch(async (error: Error) => {
        throw new Error(`${error.message}\n${await logsOfFailed(compose)}`);
      });
      await waitUntil(
        'the stack to answer /readyz through the edge',
        () =>
          fetch(`${baseUrl}/readyz`).then(
            (answer) => answer.status === 200,
            () => false,
          ),
        { timeoutMs: 300000, intervalMs: 1000 },
      );
    },
    async down(options = {}) {
      if (options.volumes) await refuseRealInstall(composeEnv());
      await compose(['down', '--remove-orphans', '--timeout', '20', ...(options.volumes ? ['--volumes'] : [])]);
    },
    forget() {
      for (const folder of [dir, storeDir]) fs.rmSync(folder, { recursive: true, force: true });
    },
    async removePlatformVolumes() {
      const volumes = ['pgdata', 'data', 'edge', 'temporal-identity', 'temporal-admin', 'temporal-tls', 'temporal-public'].map((name) => `opsflow_${name}`);
      await run('docker', ['volume', 'rm', '--force', ...volumes], composeEnv());
    },
    removeDeployedServices: () => removeScopedDockerObjects(new Docker(), DEPLOYED_SCOPE),
    docker: async (args) => (await run('docker', args, composeEnv())).toString(),
  };
}

/** A drill's end: what it deployed, its stack with every volume, and its folders go; OPSFLOW_DRILL_KEEP=1 leaves them, to look at after a failure. */
export async function endDrill(stack: ComposeStack | undefined): Promise<void> {
  if (!stack || process.env.OPSFLOW_DRILL_KEEP) return;
  await stack.removeDeployedServices();
  await stack.down({ volumes: true });
  stack.forget();
}
