import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { PROJECT_ROOT } from '../../temporal-config/temporal-cli';
import { freePort, runToEnd, spawnLogged, waitForHttp } from './children';

/**
 * Pebble, the ACME server Let's Encrypt made for testing, and its DNS stand-in (pebble-challtestsrv): built
 * from the Go module proxy, started under `npm start` and by the tests. The DNS stand-in answers every name
 * with 127.0.0.1, so Pebble checks HTTP-01 challenges against the edge on this machine. Pebble makes a new
 * root at each start: trust it only where Pebble is the ACME server.
 */
export const PINNED_PEBBLE = '2.10.3';
const MODULE = 'github.com/letsencrypt/pebble/v2';
const PEBBLE_DIR = path.join(PROJECT_ROOT, '.tools', 'pebble', PINNED_PEBBLE);

export interface RunningPebble {
  /** ACME_DIRECTORY_URL. */
  directoryUrl: string;
  /** ACME_CA_FILE: the CA of Pebble's own HTTPS. */
  caFile: string;
  /** The root Pebble signs certificates with (new at each start). */
  rootPem(): Promise<string>;
  /** Answers `hostname` with `address` instead of 127.0.0.1 (an ACME check then fails), until `clearAddress`. */
  setAddress(hostname: string, address: string): Promise<void>;
  clearAddress(hostname: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The certificate of Pebble's own HTTPS (ACME_CA_FILE), made once with openssl: quick, so a caller can name
 * the ACME server to the platform's processes before Pebble is built.
 */
export async function pebbleApiCertificate(): Promise<{ cert: string; key: string }> {
  const cert = path.join(PEBBLE_DIR, 'api-cert.pem');
  const key = path.join(PEBBLE_DIR, 'api-key.pem');
  if (!fs.existsSync(cert) || !fs.existsSync(key)) {
    fs.mkdirSync(PEBBLE_DIR, { recursive: true });
    const subject = ['-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'];
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    await runToEnd('openssl', ['req', '-x509', ...ec, '-keyout', `${key}.tmp`, '-out', `${cert}.tmp`, '-days', '3650', ...subject]);
    fs.renameSync(`${key}.tmp`, key);
    fs.renameSync(`${cert}.tmp`, cert);
  }
  return { cert, key };
}

/** Builds Pebble and its DNS stand-in once, and the HTTPS certificate of its API. */
export async function ensurePebble(say: (line: string) => void = () => undefined): Promise<{ pebble: string; dns: string; cert: string; key: string }> {
  const built = { pebble: path.join(PEBBLE_DIR, 'pebble'), dns: path.join(PEBBLE_DIR, 'pebble-challtestsrv') };
  if (!fs.existsSync(built.pebble) || !fs.existsSync(built.dns)) {
    say(`building Pebble ${PINNED_PEBBLE} from the Go module proxy`);
    fs.mkdirSync(PEBBLE_DIR, { recursive: true });
    const env = { ...process.env, GOBIN: PEBBLE_DIR, GOFLAGS: '-mod=mod' };
    await runToEnd('go', ['install', `${MODULE}/cmd/pebble@v${PINNED_PEBBLE}`, `${MODULE}/cmd/pebble-challtestsrv@v${PINNED_PEBBLE}`], env);
  }
  return { ...built, ...(await pebbleApiCertificate()) };
}

/** A request to the management API of Pebble or its DNS stand-in. */
function manage(url: string, args: { ca?: string; body?: unknown } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const send = target.protocol === 'https:' ? https.request : http.request;
    const request = send(
      url,
      { method: args.body ? 'POST' : 'GET', ca: args.ca, headers: { 'content-type': 'application/json', 'user-agent': 'opsflow' } },
      (answer: http.IncomingMessage) => {
        let text = '';
        answer.on('data', (chunk) => (text += chunk));
        answer.on('end', () => (answer.statusCode === 200 ? resolve(text) : reject(new Error(`${url} answered ${answer.statusCode}: ${text}`))));
      },
    );
    request.on('error', (error) => reject(new Error(`${url}: ${error.message}`)));
    request.end(args.body ? JSON.stringify(args.body) : undefined);
  });
}

/** Writes Pebble's configuration file into `dir`: its ports, its own TLS key, and how long certificates last. */
function writePebbleConfig(args: {
  dir: string;
  built: { cert: string; key: string };
  listen: number;
  management: number;
  httpPort: number;
  validitySeconds?: number;
}): string {
  fs.mkdirSync(args.dir, { recursive: true });
  const config = path.join(args.dir, 'pebble-config.json');
  const validityPeriod = args.validitySeconds ?? 90 * 86400;
  const settings = {
    listenAddress: `127.0.0.1:${args.listen}`,
    managementListenAddress: `127.0.0.1:${args.management}`,
    certificate: args.built.cert,
    privateKey: args.built.key,
    httpPort: args.httpPort,
    tlsPort: args.httpPort,
    ocspResponderURL: '',
    externalAccountBindingRequired: false,
    retryAfter: { authz: 1, order: 1 },
    keyAlgorithm: 'ecdsa',
    profiles: { default: { description: 'the platform', validityPeriod } },
  };
  fs.writeFileSync(config, JSON.stringify({ pebble: settings }, null, 1));
  return config;
}

/**
 * Starts Pebble and its DNS stand-in. `httpPort`: where Pebble asks HTTP-01 challenges (the edge's plain
 * HTTP). `validitySeconds`: how long its certificates last (short, to test renewal).
 */
export async function startPebble(args: {
  dir: string;
  httpPort: number;
  /** Where its ACME API listens, when the caller has named it already. */
  listenPort?: number;
  validitySeconds?: number;
  logFile?: string;
}): Promise<RunningPebble> {
  const built = await ensurePebble();
  const [listen, management, dnsPort, dnsManagement] = [args.listenPort ?? (await freePort()), await freePort(), await freePort(), await freePort()];
  const config = writePebbleConfig({ dir: args.dir, built, listen, management, httpPort: args.httpPort, validitySeconds: args.validitySeconds });
  const logFile = args.logFile ?? path.join(args.dir, 'pebble.log');
  const dns = spawnLogged(
    built.dns,
    // IPv4 answers only: the edge listens on 127.0.0.1, and a ::1 answer would send Pebble where nothing listens.
    [
      '-defaultIPv6',
      '',
      '-dnsserver',
      `127.0.0.1:${dnsPort}`,
      '-management',
      `127.0.0.1:${dnsManagement}`,
      '-http01',
      '',
      '-https01',
      '',
      '-tlsalpn01',
      '',
      '-doh',
      '',
    ],
    logFile,
  );
  // No sleep before checks, and no nonce refused at random: the tests wait for what they check, nothing else.
  const env = { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' };
  const pebble = spawnLogged(built.pebble, ['-config', config, '-dnsserver', `127.0.0.1:${dnsPort}`], logFile, { env });
  const ca = fs.readFileSync(built.cert, 'utf8');
  const directoryUrl = `https://127.0.0.1:${listen}/dir`;
  const stop = async () => {
    await Promise.all([pebble.stop(), dns.stop()]);
  };
  try {
    await waitForHttp(`http://127.0.0.1:${dnsManagement}/`, { what: 'pebble-challtestsrv', deadlineMs: 30000, isUp: () => true, stopIf: dns.exit });
    const started = Date.now();
    for (;;) {
      if (pebble.exit()) throw new Error(`Pebble exited while starting (${pebble.exit()}): ${pebble.said()}`);
      if (
        await manage(directoryUrl, { ca }).then(
          () => true,
          () => false,
        )
      )
        break;
      if (Date.now() - started > 30000) throw new Error(`Pebble did not answer on ${directoryUrl} within 30 s: ${pebble.said()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const dnsApi = (verb: string, body: unknown) => manage(`http://127.0.0.1:${dnsManagement}/${verb}`, { body }).then(() => undefined);
  return {
    directoryUrl,
    caFile: built.cert,
    rootPem: () => manage(`https://127.0.0.1:${management}/roots/0`, { ca }),
    setAddress: (hostname, address) => dnsApi('add-a', { host: `${hostname}.`, addresses: [address] }),
    clearAddress: (hostname) => dnsApi('clear-a', { host: `${hostname}.` }),
    stop,
  };
}
