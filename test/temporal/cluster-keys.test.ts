import { spawn } from 'node:child_process';
import crypto, { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { ensureTemporalServer, TemporalServerBinaries } from '../../scripts/temporal-server';
import { RunningTemporalCluster, SERVER_CONFIG_TEMPLATE, startTemporalCluster } from '../../scripts/platform/temporal-cluster';
import { loadOrCreateSigningKey, loadSigningKey, ServiceSigningKey, signServiceToken, TEMPORAL_TOKEN_AUDIENCE } from '../../temporal-config/service-identity';
import { clientTlsOf } from '../../temporal-config/server-certificates';
import { sharedPostgresAdminUrl } from '../support/platform';
import { rejectionOf } from '../support/failures';

/**
 * The classes of keys the nodes keep apart (temporal-config/server/claim_mapper.go): the administrator's key
 * alone mints admin tokens; the workload key of the API and the workers is capped at write; the operators'
 * identity provider is taken from its pinned issuer only, and never its ID tokens. One node is enough: the
 * claim mapper is each node's own.
 */
const NAMESPACE = 'keys';
const ISSUER = 'https://idp.example/realms/operators';

let dir: string;
let binaries: TemporalServerBinaries;
let cluster: RunningTemporalCluster;
/** The organisation's identity provider: one key, which signs for its realms (issuers) and its ID tokens. */
let provider: ServiceSigningKey;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-temporal-keys-'));
  provider = loadOrCreateSigningKey(path.join(dir, 'provider'));
  const postgres = new URL(sharedPostgresAdminUrl());
  binaries = await ensureTemporalServer();
  cluster = await startTemporalCluster({
    binaries,
    sql: { host: postgres.hostname, port: Number(postgres.port), user: decodeURIComponent(postgres.username), password: decodeURIComponent(postgres.password) },
    databases: { history: 'temporal_keys', visibility: 'temporal_keys_visibility' },
    fresh: true,
    namespaces: [NAMESPACE],
    dir,
    nodes: 1,
    identityDir: path.join(dir, 'identity'),
    operator: { jwksUri: `file://${provider.jwksFile}`, issuer: ISSUER },
  });
}, 300000);

afterAll(async () => {
  await cluster?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** A token as an identity provider signs it: any header and claims, ES256 with `key`. */
function providerToken(key: ServiceSigningKey, header: Record<string, unknown>, claims: Record<string, unknown>): string {
  const now = Math.floor(Date.now() / 1000);
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const signed = `${part({ alg: 'ES256', typ: 'JWT', kid: key.kid, ...header })}.${part({ aud: TEMPORAL_TOKEN_AUDIENCE, iat: now, exp: now + 600, ...claims })}`;
  const signature = crypto.sign('sha256', Buffer.from(signed), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${signed}.${signature.toString('base64url')}`;
}

/** How a call with this token ends: 'allowed', or the server's refusal. */
async function outcome(apiKey: string, call: (connection: Connection) => Promise<unknown>): Promise<string> {
  // Lazy: the call itself meets the door (a connect would be refused first, for a refused token).
  const connection = Connection.lazy({ address: cluster.address, apiKey, tls: clientTlsOf(cluster.tlsCaFile) ?? false });
  try {
    const error = (await rejectionOf(call(connection))) as { code?: number; message?: string } | null;
    return error === null ? 'allowed' : `code ${error.code}: ${error.message}`;
  } finally {
    await connection.close();
  }
}

const DENIED = /^code 7: .*(unauthorized|denied)/i;
const describe_ = (connection: Connection) => connection.workflowService.describeNamespace({ namespace: NAMESPACE });
const updateNamespace = (connection: Connection) =>
  connection.workflowService.updateNamespace({ namespace: NAMESPACE, updateInfo: { description: `updated ${randomUUID()}` } });
/** Starts a run no worker will take: a write to the namespace. */
const startRun = (namespace: string) => (connection: Connection) =>
  connection.workflowService.startWorkflowExecution({
    namespace,
    workflowId: `keys-${randomUUID()}`,
    workflowType: { name: 'nothing' },
    taskQueue: { name: 'nobody' },
    requestId: randomUUID(),
  });
const registerNamespace = (namespace: string) => (connection: Connection) =>
  connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });

test("#58, finding 5: the operators' provider is taken from its pinned issuer only, and never its ID tokens: the same key's token of another issuer, or an ID token, is refused", async () => {
  const access = { sub: 'olga', iss: ISSUER, typ: 'Bearer', permissions: [`${NAMESPACE}:read`] };
  // The control: the pinned issuer's access token opens what its permissions name.
  expect(await outcome(providerToken(provider, {}, access), describe_)).toBe('allowed');
  const refused = {
    // Another realm of the same provider, signed with the same key.
    foreignIssuer: providerToken(provider, {}, { ...access, iss: 'https://idp.example/realms/customers' }),
    noIssuer: providerToken(provider, {}, { ...access, iss: undefined }),
    keycloakIdToken: providerToken(provider, {}, { ...access, typ: 'ID' }),
    cognitoIdToken: providerToken(provider, {}, { ...access, typ: undefined, token_use: 'id' }),
    idTokenHeader: providerToken(provider, { typ: 'id_token+jwt' }, { ...access, typ: undefined }),
    // ID tokens most providers mark only by their own claims: a nonce, or the hash of an access token or code.
    withNonce: providerToken(provider, {}, { ...access, typ: undefined, nonce: 'n-0S6_WzA2Mj' }),
    withAccessTokenHash: providerToken(provider, {}, { ...access, typ: undefined, at_hash: 'HK6E_P6Dh8Y93mRNtsDB1Q' }),
    withCodeHash: providerToken(provider, {}, { ...access, typ: undefined, c_hash: 'LDktKdoQak3Pk0cnXxCltA' }),
  };
  const outcomes: Record<string, string> = {};
  for (const [name, token] of Object.entries(refused)) outcomes[name] = await outcome(token, describe_);
  expect(outcomes).toEqual(Object.fromEntries(Object.keys(refused).map((name) => [name, expect.stringMatching(DENIED)])));
});

test("#58, finding 5: a node given the operators' JWKS without a pinned issuer refuses to start, and says why", async () => {
  const child = spawn(binaries.server, ['--config-file', SERVER_CONFIG_TEMPLATE, 'start', '--service', 'frontend'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      TEMPORAL_JWKS_URI: `file://${loadSigningKey(cluster.identityDir).jwksFile}`,
      TEMPORAL_ADMIN_JWKS_URI: `file://${loadSigningKey(cluster.adminIdentityDir).jwksFile}`,
      TEMPORAL_OPERATOR_JWKS_URI: `file://${provider.jwksFile}`,
    },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = await Promise.race([
    new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))),
    new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 20000)),
  ]);
  if (exited === 'running') child.kill('SIGKILL');
  const said = output.split('\n').filter((line) => /claim mapper|ISSUER|Unable/.test(line));
  expect({ exited, said }).toEqual({ exited: expect.any(Number), said: expect.arrayContaining([expect.stringContaining('TEMPORAL_OPERATOR_ISSUER')]) });
  expect(exited).not.toBe(0);
});

test("#58, finding 6: the workload key (the API's and the workers') mints no admin token the nodes take; the administrator's key does, for the setup", async () => {
  const workload = loadSigningKey(cluster.identityDir);
  const admin = loadSigningKey(cluster.adminIdentityDir);
  const everything = ['temporal-system:admin', `${NAMESPACE}:admin`];
  const stolen = signServiceToken(workload, { subject: 'mallory', permissions: everything });
  const newNamespace = `mallory-${randomUUID()}`;
  const stolenForIt = signServiceToken(workload, { subject: 'mallory', permissions: [`${newNamespace}:admin`] });
  expect({
    registerAsSystemAdmin: await outcome(stolen, registerNamespace(`mallory-${randomUUID()}`)),
    updateAsNamespaceAdmin: await outcome(stolen, updateNamespace),
    registerAsItsAdmin: await outcome(stolenForIt, registerNamespace(newNamespace)),
  }).toEqual({
    registerAsSystemAdmin: expect.stringMatching(DENIED),
    updateAsNamespaceAdmin: expect.stringMatching(DENIED),
    registerAsItsAdmin: expect.stringMatching(DENIED),
  });
  // What the platform's processes need still holds: their namespace read and written, the cluster read (the Web UI).
  expect(await outcome(stolen, describe_)).toBe('allowed');
  expect(await outcome(stolen, startRun(NAMESPACE))).toBe('allowed');
  const webUi = signServiceToken(workload, { subject: 'opsflow-web-ui', permissions: ['temporal-system:read'] });
  expect(await outcome(webUi, (connection) => connection.workflowService.listNamespaces({}))).toBe('allowed');
  // The administrator's key: the same calls are taken.
  const setup = signServiceToken(admin, { subject: 'opsflow-setup', permissions: everything, seconds: 120 });
  expect(await outcome(setup, updateNamespace)).toBe('allowed');
  const other = `setup-${randomUUID()}`;
  expect(await outcome(setup, registerNamespace(other))).toBe('allowed');
  // A namespace that is not the platform's is not the workload key's to write, whatever its token says.
  const elsewhere = signServiceToken(workload, { subject: 'mallory', permissions: [`${other}:write`] });
  expect(await outcome(elsewhere, startRun(other))).toEqual(expect.stringMatching(DENIED));
});
