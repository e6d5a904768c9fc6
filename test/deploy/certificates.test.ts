import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { call, expectProblem } from '../support/http';
import { freePort } from '../support/slots';
import { waitUntil } from '../support/wait';
import { mailTo, smtpChannel } from '../messaging/harness';
import { decodedPayloads, workflowShow } from '../support/observed';
import { recordHistory, recordNewestHistory } from '../support/histories';
import { RunningPebble, startPebble } from '../../scripts/platform/pebble';
import { certificateWorkflowId, CertificateOutcome } from '../../workflows/deploy/definitions';
import { deployTestFile } from './harness';
import { curl, handshake, steadyHttpsTraffic } from './tls';

/**
 * #64: certificates from a real ACME server (Pebble, with its DNS stand-in) for a JAR service's hostname,
 * served by the real edge over HTTPS with SNI; renewed by the schedule under traffic; a refused challenge
 * kept with the ACME server's problem and mended by a later try.
 */
const LIFETIME_SECONDS = 30;
const env: NodeJS.ProcessEnv = {};
let pebble: RunningPebble;
let root: string;
const ports = { http: 0, tls: 0 };
// Before the file's platform starts (registered first): Pebble checks challenges on the edge's plain HTTP port.
beforeAll(async () => {
  ports.http = await freePort();
  ports.tls = await freePort();
  pebble = await startPebble({ dir: fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-pebble-')), httpPort: ports.http, validitySeconds: LIFETIME_SECONDS });
  root = await pebble.rootPem();
  Object.assign(env, {
    API_PORT: String(ports.http),
    EDGE_TLS_PORT: String(ports.tls),
    ACME_DIRECTORY_URL: pebble.directoryUrl,
    ACME_CA_FILE: pebble.caFile,
    ACME_RENEWAL_CHECK_SECONDS: '2',
    // A failed name is tried again when an operator sets the list again, not by the schedule during the test.
    ACME_RETRY_SECONDS: '86400',
  });
});
afterAll(async () => pebble?.stop());

const { thisFile, tokens, deployJar, expectRunning } = deployTestFile(env);
const HOST = 'hello.example.test';
const BROKEN = 'broken.example.test';

const outcomeOf = (hostname: string): Promise<CertificateOutcome> =>
  thisFile.platform.temporal.client.workflow.getHandle(certificateWorkflowId(hostname)).result();
const domains = async () => (await call(thisFile.api.url, 'GET', '/api/infra/services/hello-tls/domains', { token: tokens.admin })).body.domains;
const served = () => handshake({ port: ports.tls, servername: HOST, ca: root });

beforeAll(async () => {
  const accepted = await deployJar('hello-tls', 'HelloServer', { domains: HOST });
  await expectRunning(accepted);
}, 240000);

test('#64: a JAR deploy with a hostname is served over HTTPS with a certificate from the ACME server; plain HTTP redirects with 308', async () => {
  const outcome = await outcomeOf(HOST);
  expect(outcome).toEqual(expect.objectContaining({ hostname: HOST, state: 'ISSUED' }));
  await recordHistory(thisFile.platform.temporal, { workflowId: certificateWorkflowId(HOST), name: 'certificate-issued' });
  const [entry] = await domains();
  expect(entry).toEqual({ hostname: HOST, state: 'ISSUED', source: 'ACME', notAfter: expect.any(String), problem: null });

  // The handshake for the name: a certificate that chains to Pebble's root and names it.
  const shown = await served();
  expect(shown).toEqual(expect.objectContaining({ authorized: true, names: `DNS:${HOST}` }));

  // As an operator checks it: curl with --resolve and Pebble's root verifies, and the service answers, with HSTS.
  const rootFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-root-')), 'root.pem');
  fs.writeFileSync(rootFile, root);
  const secure = await curl([
    '--resolve',
    `${HOST}:${ports.tls}:127.0.0.1`,
    '--cacert',
    rootFile,
    '-H',
    `authorization: Bearer ${tokens.viewer}`,
    `https://${HOST}:${ports.tls}/ping`,
  ]);
  expect(secure.code).toBe(0);
  expect(secure.output).toMatch(/^HTTP\/\S+ 200/m);
  expect(secure.output).toMatch(/^strict-transport-security: max-age=31536000/im);

  // Plain HTTP sends the same URL to HTTPS, 308 (a POST stays a POST); the slug's path stays plain HTTP's.
  const plain = await curl(['--resolve', `${HOST}:${ports.http}:127.0.0.1`, '-X', 'POST', `http://${HOST}:${ports.http}/orders?x=1`]);
  expect(plain.output).toMatch(/^HTTP\/1\.1 308/m);
  expect(plain.output).toMatch(new RegExp(`^location: https://${HOST.replace(/\./g, '\\.')}:${ports.tls}/orders\\?x=1`, 'im'));
  expect((await call(thisFile.api.url, 'GET', '/api/hello-tls/ping', { token: tokens.viewer })).status).toBe(200);
}, 120000);

test('#64: a refused challenge leaves the service serving on its path, shows the ACME problem, and a later try issues the certificate', async () => {
  // The DNS stand-in sends Pebble elsewhere for this name: its check of the challenge cannot connect.
  await pebble.setAddress(BROKEN, '127.0.0.2');
  const set = await call(thisFile.api.url, 'PUT', '/api/infra/services/hello-tls/domains', { token: tokens.admin, body: { domains: [HOST, BROKEN] } });
  expect(set.status).toBe(200);
  expect(await outcomeOf(BROKEN)).toEqual(expect.objectContaining({ hostname: BROKEN, state: 'FAILED' }));
  await recordHistory(thisFile.platform.temporal, { workflowId: certificateWorkflowId(BROKEN), name: 'certificate-refused' });
  const failed = (await domains()).find((domain: { hostname: string }) => domain.hostname === BROKEN);
  expect(failed).toEqual({
    hostname: BROKEN,
    state: 'FAILED',
    source: 'ACME',
    notAfter: null,
    problem: expect.stringMatching(/^urn:ietf:params:acme:error:\w+: .+/),
  });
  expect((await call(thisFile.api.url, 'GET', '/api/hello-tls/ping', { token: tokens.viewer })).status).toBe(200);

  // DNS mended, the operator sets the list again: a new run issues the certificate.
  await pebble.clearAddress(BROKEN);
  await call(thisFile.api.url, 'PUT', '/api/infra/services/hello-tls/domains', { token: tokens.admin, body: { domains: [HOST, BROKEN] } });
  // The run ends once the edge serves the certificate; the domain says so too.
  expect(await outcomeOf(BROKEN)).toEqual(expect.objectContaining({ hostname: BROKEN, state: 'ISSUED' }));
  expect((await domains()).find((domain: { hostname: string }) => domain.hostname === BROKEN)).toEqual(
    expect.objectContaining({ state: 'ISSUED', problem: null }),
  );
  expect((await handshake({ port: ports.tls, servername: BROKEN, ca: root })).authorized).toBe(true);
}, 120000);

test('#64: the renewal schedule replaces a certificate before it expires, under steady HTTPS traffic, with no failed request', async () => {
  const first = await served();
  const firstEnd = new Date((await domains()).find((domain: { hostname: string }) => domain.hostname === HOST).notAfter);
  let stopped: { answered: number; failures: string[] };
  const traffic = steadyHttpsTraffic({ port: ports.tls, servername: HOST, ca: root, path: '/ping', token: tokens.viewer });
  let renewed: Awaited<ReturnType<typeof served>> & { at: Date };
  try {
    renewed = await waitUntil(
      'a renewed certificate served',
      async () => {
        const now = await served();
        return now.serial !== first.serial ? { ...now, at: new Date() } : null;
      },
      LIFETIME_SECONDS * 1000,
    );
    // Traffic goes on a moment after the swap, on connections opened before and after it.
    await new Promise((resolve) => setTimeout(resolve, 2000));
  } finally {
    stopped = await traffic.stop();
  }
  await recordNewestHistory(thisFile.platform.temporal, { workflowType: 'renewCertificates', name: 'certificate-renewal-sweep' });
  expect(renewed.authorized).toBe(true);
  expect(renewed.at.getTime()).toBeLessThan(firstEnd.getTime());
  expect({ answered: stopped.answered > 0, failures: stopped.failures }).toEqual({ answered: true, failures: [] });
}, 120000);

/**
 * A self-signed certificate and its key for `hostname`, as an organisation's own CA might give one: valid from
 * now for a day, or over `valid` (made by
 * `openssl ca`, the one tool of OpenSSL 3.0 that sets a start date).
 */
function selfSigned(
  hostname: string,
  valid?: { from: Date; to: Date },
  keyType = ['ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'],
): { certificate: string; privateKey: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-own-certificate-'));
  const at = (name: string) => path.join(dir, name);
  const subject = ['-subj', `/CN=${hostname}`, '-addext', `subjectAltName=DNS:${hostname}`];
  const newKey = ['-newkey', ...keyType, '-nodes', '-keyout', at('key.pem')];
  const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  if (!valid) openssl(['req', '-x509', ...newKey, '-days', '1', '-out', at('cert.pem'), ...subject]);
  else {
    openssl(['req', '-new', ...newKey, '-out', at('request.csr'), ...subject]);
    fs.writeFileSync(at('index.txt'), '');
    fs.writeFileSync(at('serial'), '01\n');
    const config = `[ca]\ndefault_ca = own\n[own]\ndatabase = ${at('index.txt')}\nnew_certs_dir = ${dir}\nserial = ${at('serial')}\ndefault_md = sha256\npolicy = any\ncopy_extensions = copy\n[any]\ncommonName = supplied\n`;
    fs.writeFileSync(at('ca.cnf'), config);
    const stamp = (date: Date) => `${date.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
    openssl([
      'ca',
      '-batch',
      '-notext',
      '-selfsign',
      '-config',
      at('ca.cnf'),
      '-keyfile',
      at('key.pem'),
      '-in',
      at('request.csr'),
      '-out',
      at('cert.pem'),
      '-startdate',
      stamp(valid.from),
      '-enddate',
      stamp(valid.to),
    ]);
  }
  const pair = { certificate: fs.readFileSync(at('cert.pem'), 'utf8'), privateKey: fs.readFileSync(at('key.pem'), 'utf8') };
  fs.rmSync(dir, { recursive: true, force: true });
  return pair;
}

test("#64: an uploaded certificate and key replace ACME's for a name, and are served; one that does not name it, or whose key the edge cannot serve, is 400 CERTIFICATE_INVALID; DELETE gives the name back to ACME", async () => {
  const OWN = 'own.example.test';
  // Pebble cannot check this name: only the upload can certify it, whenever its ACME run ends.
  await pebble.setAddress(OWN, '127.0.0.2');
  await call(thisFile.api.url, 'PUT', '/api/infra/services/hello-tls/domains', { token: tokens.admin, body: { domains: [HOST, BROKEN, OWN] } });
  const upload = (body: unknown) => call(thisFile.api.url, 'PUT', `/api/infra/services/hello-tls/domains/${OWN}/certificate`, { token: tokens.admin, body });
  expectProblem(await upload(selfSigned('other.example.test')), 400, 'CERTIFICATE_INVALID');
  const own = selfSigned(OWN);
  const mismatched = { certificate: own.certificate, privateKey: selfSigned(OWN).privateKey };
  expectProblem(await upload(mismatched), 400, 'CERTIFICATE_INVALID');
  // Envoy refuses these keys, and with them the whole HTTPS listener: every other name's change would stop.
  for (const keyType of [['rsa:1024'], ['ed25519']]) expectProblem(await upload(selfSigned(OWN, undefined, keyType)), 400, 'CERTIFICATE_INVALID');
  const uploaded = await upload(own);
  expect(uploaded.status).toBe(200);
  expect(uploaded.text).not.toMatch(/PRIVATE KEY/);
  expect(uploaded.body.domains.find((domain: { hostname: string }) => domain.hostname === OWN)).toEqual({
    hostname: OWN,
    state: 'ISSUED',
    source: 'UPLOADED',
    notAfter: expect.any(String),
    problem: null,
  });
  // The ACME run for the name ends without touching the upload.
  await outcomeOf(OWN);
  expect((await domains()).find((domain: { hostname: string }) => domain.hostname === OWN)).toEqual(
    expect.objectContaining({ state: 'ISSUED', source: 'UPLOADED' }),
  );
  const shown = await waitUntil('the uploaded certificate served', async () => {
    // Until the edge's listener has the name's chain, a handshake for it is refused.
    const now = await handshake({ port: ports.tls, servername: OWN, ca: own.certificate }).catch(() => null);
    return now?.authorized ? now : null;
  });
  expect(shown.names).toBe(`DNS:${OWN}`);

  // DELETE gives the name back to ACME: the upload and its key are gone, and a new run is under way.
  const reset = await call(thisFile.api.url, 'DELETE', `/api/infra/services/hello-tls/domains/${OWN}/certificate`, { token: tokens.admin });
  expect(reset.status).toBe(200);
  expect(reset.body.domains.find((domain: { hostname: string }) => domain.hostname === OWN)).toEqual({
    hostname: OWN,
    state: 'PENDING',
    source: 'ACME',
    notAfter: null,
    problem: null,
  });
  expect(await thisFile.platform.db('infra.certificate').where({ hostname: OWN }).first('chain_pem', 'key_sealed')).toEqual({
    chain_pem: null,
    key_sealed: null,
  });
  expectProblem(
    await call(thisFile.api.url, 'DELETE', '/api/infra/services/hello-tls/domains/nobody.example.test/certificate', { token: tokens.admin }),
    404,
    'DOMAIN_NOT_FOUND',
  );
}, 120000);

test("#64: an uploaded certificate near its end tells the service's owners once, and GET …/domains says why until the next upload", async () => {
  const ENDING = 'ending.example.test';
  const owner = 'owner@certificate-notice.example';
  await thisFile.platform.startWorker(['messaging'], { API_INTERNAL_URL: thisFile.api.url });
  await smtpChannel(thisFile.api.url, tokens.admin, 'capture', thisFile.platform.info.mail.smtpPort);
  const told = await call(thisFile.api.url, 'PUT', '/api/infra/services/hello-tls/notify', {
    token: tokens.admin,
    body: { siteId: 'site-1', emails: [owner] },
  });
  expect(told.status).toBe(200);
  await pebble.setAddress(ENDING, '127.0.0.2');
  const names = (await domains()).map((domain: { hostname: string }) => domain.hostname);
  await call(thisFile.api.url, 'PUT', '/api/infra/services/hello-tls/domains', { token: tokens.admin, body: { domains: [...names, ENDING] } });
  // Valid for three days, 2.2 of them gone: past the two thirds of its lifetime at which a short-lived upload is warned of.
  const day = 86400000;
  const ending = selfSigned(ENDING, { from: new Date(Date.now() - 2.2 * day), to: new Date(Date.now() + 0.8 * day) });
  const uploaded = await call(thisFile.api.url, 'PUT', `/api/infra/services/hello-tls/domains/${ENDING}/certificate`, {
    token: tokens.admin,
    body: ending,
  });
  expect(uploaded.status).toBe(200);

  // The renewal schedule looks every 2 s here: the owner gets the notice, and the name says why. (A renewal of
  // another name that failed meanwhile would tell the owner too, in a mail of its own.)
  const noticesOfEnding = async () => (await mailTo(thisFile.platform.info.mail.apiUrl, owner)).filter((mail) => mail.subject.startsWith(`${ENDING}:`));
  const [notice] = await waitUntil(
    'the notice of the ending upload',
    async () => {
      const mails = await noticesOfEnding();
      return mails.length > 0 ? mails : null;
    },
    60000,
  );
  expect(notice.subject).toBe(`${ENDING}: the uploaded certificate ends soon`);
  expect(notice.html).toContain('/console/services/hello-tls');
  const shown = (await domains()).find((domain: { hostname: string }) => domain.hostname === ENDING);
  expect(shown).toEqual(expect.objectContaining({ state: 'ISSUED', source: 'UPLOADED', problem: expect.stringMatching(/^The uploaded certificate ends at /) }));

  await recordSweepThatWarned(ENDING);

  // Later sweeps write no second notice for the same upload: two more of them end, and the log holds one.
  const sweepsBefore = await sweepsCompleted();
  await waitUntil('two more renewal sweeps completed', async () => (await sweepsCompleted()) >= sweepsBefore + 2, 60000);
  const notices = await thisFile.platform.db('email.email_log').where({ platform_template: 'certificate-ending', recipient: owner }).count({ n: '*' });
  expect(Number(notices[0].n)).toBe(1);
  expect(await noticesOfEnding()).toHaveLength(1);

  // The next upload clears the note: it ends in a day, far from its own warning.
  const next = await call(thisFile.api.url, 'PUT', `/api/infra/services/hello-tls/domains/${ENDING}/certificate`, {
    token: tokens.admin,
    body: selfSigned(ENDING),
  });
  expect(next.body.domains.find((domain: { hostname: string }) => domain.hostname === ENDING)).toEqual(
    expect.objectContaining({ source: 'UPLOADED', problem: null }),
  );
}, 180000);

/** With RECORD_HISTORIES=1, saves the history of the sweep that told the owners of `hostname`'s upload. */
async function recordSweepThatWarned(hostname: string): Promise<void> {
  if (!process.env.RECORD_HISTORIES) return;
  const { client } = thisFile.platform.temporal;
  // The list follows the runs a moment behind.
  const warning = await waitUntil(`the sweep that warned of ${hostname}, listed`, async () => {
    for await (const run of client.workflow.list({ query: "WorkflowType='renewCertificates' AND ExecutionStatus='Completed'" })) {
      const result = (await client.workflow.getHandle(run.workflowId, run.runId).result()) as { warned?: string[] };
      if (result.warned?.includes(hostname)) return run;
    }
    return null;
  });
  await recordHistory(thisFile.platform.temporal, { workflowId: warning.workflowId, runId: warning.runId, name: 'certificate-upload-ending' });
}

/** How many runs of the renewal sweep have completed so far. */
async function sweepsCompleted(): Promise<number> {
  const { count } = await thisFile.platform.temporal.client.workflow.count("WorkflowType='renewCertificates' AND ExecutionStatus='Completed'");
  return count;
}

test('#64: no workflow history and no database row holds a private key', async () => {
  const histories = [HOST, BROKEN].map((hostname) => workflowShow(thisFile.platform, certificateWorkflowId(hostname)));
  for (const shown of histories) {
    expect(shown).not.toMatch(/PRIVATE KEY/);
    expect(await decodedPayloads(thisFile.platform, shown)).not.toMatch(/PRIVATE KEY/);
  }
  const saved = path.resolve(__dirname, '..', 'histories', 'certificate-issued.json');
  if (fs.existsSync(saved)) expect(fs.readFileSync(saved, 'utf8')).not.toMatch(/PRIVATE KEY/);
  const rows = await thisFile.platform.db.raw(
    `select row_to_json(c)::text as text from infra.certificate c union all select row_to_json(a)::text from infra.acme_account a`,
  );
  expect(rows.rows.length).toBeGreaterThan(0);
  for (const row of rows.rows) expect(row.text).not.toMatch(/PRIVATE KEY/);
});
