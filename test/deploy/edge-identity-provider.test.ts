import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { writeEdgeConfig } from '../../edge/files';
import { EdgePlan } from '../../edge/xds';
import { RunningEdge, startEdge } from '../../scripts/platform/edge';
import { freePort } from '../support/slots';
import { waitUntil } from '../support/wait';

/**
 * The edge and the identity provider's key server. Envoy fetches the JWKS itself: unless it verifies the
 * server's certificate, whoever answers for the provider (on the path, or by DNS) serves their own keys and
 * signs ADMIN tokens for every deployed service. And once a provider is configured, the platform's own HS256
 * tokens, which name no issuer or audience, are no longer accepted at the edge (the API refuses them too).
 */
const ISSUER = 'https://idp.example.test';
const AUDIENCE = 'opsflow';
const SECRET = 'edge-idp-test-secret-of-enough-length';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-edge-idp-'));
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

let keys: Awaited<ReturnType<typeof generateKeyPair>>;
let jwks: string;
let service: http.Server;
const servers: https.Server[] = [];

/** A certificate for localhost and 127.0.0.1: signed by the test's CA, or by itself. */
function certificate(name: string, signedBy: 'ca' | 'self'): { key: Buffer; cert: Buffer } {
  const ext = path.join(dir, `${name}.ext`);
  fs.writeFileSync(ext, 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-subj', '/CN=localhost', '-out', `${name}.csr`);
  if (signedBy === 'ca')
    openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', ext, '-out', `${name}.crt`);
  else openssl('x509', '-req', '-in', `${name}.csr`, '-signkey', `${name}.key`, '-days', '2', '-extfile', ext, '-out', `${name}.crt`);
  return { key: fs.readFileSync(path.join(dir, `${name}.key`)), cert: fs.readFileSync(path.join(dir, `${name}.crt`)) };
}

async function keyServer(tls: { key: Buffer; cert: Buffer }): Promise<string> {
  const server = https.createServer(tls, (_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(jwks));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
}

beforeAll(async () => {
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-subj', '/CN=Opsflow test CA', '-days', '2', '-out', 'ca.crt');
  keys = await generateKeyPair('RS256');
  jwks = JSON.stringify({ keys: [{ ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] });
  service = http.createServer((_request, response) => response.writeHead(200).end('served'));
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  for (const server of [...servers, service]) await new Promise((resolve) => server.close(resolve));
  fs.rmSync(dir, { recursive: true, force: true });
});

const providerToken = () =>
  new SignJWT({ roles: ['ADMIN'], sites: [] })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject('ada')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(keys.privateKey);
const platformToken = () =>
  new SignJWT({ sub: 'ada', roles: ['ADMIN'] })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(SECRET));

/** An edge whose identity provider's keys are at `jwksUrl`, trusting `caFile`; answers how `token` fares on a service. */
async function withEdge(jwksUrl: string, work: (ask: (token: string) => Promise<number>) => Promise<void>): Promise<void> {
  const edgeDir = fs.mkdtempSync(path.join(dir, 'edge-'));
  const plan: EdgePlan = {
    dir: edgeDir,
    listen: { host: '127.0.0.1', port: await freePort() },
    api: { host: '127.0.0.1', port: (service.address() as AddressInfo).port },
    reservedSlugs: ['settings'],
    services: [
      { name: 'hello-service', slug: 'hello', healthPath: '/health', instances: [{ host: '127.0.0.1', port: (service.address() as AddressInfo).port }] },
    ],
    jwt: { hs256Secret: SECRET, jwks: { url: jwksUrl, issuer: ISSUER, audience: AUDIENCE, caFile: path.join(dir, 'ca.crt') } },
    connectTimeoutMs: 1000,
    idleTimeoutMs: 60000,
  };
  writeEdgeConfig(plan);
  // Envoy reads the bundle from its own folder (in compose it mounts nothing else).
  expect(fs.readFileSync(path.join(edgeDir, 'cds.json'), 'utf8')).toContain(JSON.stringify(path.join(edgeDir, 'jwks-ca.pem')));
  let edge: RunningEdge | null = null;
  try {
    edge = await startEdge({ dir: edgeDir, adminPort: await freePort() });
    const ask = async (token: string) =>
      (await fetch(`http://127.0.0.1:${plan.listen.port}/api/hello/x`, { headers: { authorization: `Bearer ${token}` } })).status;
    await work(ask);
  } finally {
    await edge?.stop();
  }
}

test("a key server whose certificate the edge's CA did not sign serves no keys: the provider's tokens are refused", async () => {
  const impostor = await keyServer(certificate('impostor', 'self'));
  await withEdge(impostor, async (ask) => {
    // Past the first fetch (and its retries), a token signed with the served key is still refused.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(await ask(await providerToken())).toBe(401);
  });
});

test("a key server signed by the CA the edge trusts is believed: the provider's tokens pass; the platform's HS256 tokens do not", async () => {
  const genuine = await keyServer(certificate('genuine', 'ca'));
  await withEdge(genuine, async (ask) => {
    await waitUntil("the provider's token accepted", async () => ((await ask(await providerToken())) === 200 ? true : null), 15000);
    expect(await ask(await platformToken())).toBe(401);
  });
});
