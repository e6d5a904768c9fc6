import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The Temporal cluster's TLS: a certificate authority of the platform's own and one certificate for the
 * nodes, made at first start with Debian's `openssl`, kept beside the signing key. The nodes serve their
 * frontends with it and authenticate each other with it (mutual TLS between nodes); clients verify the
 * frontend against the authority, under one server name whatever address they dial (the door forwards
 * TCP, so the node's certificate is what a client sees).
 */
export const TEMPORAL_TLS_SERVER_NAME = 'temporal';

/** Names the nodes' certificate answers to: the name clients verify, compose's service names, loopback. */
const NODE_NAMES = ['DNS:temporal', 'DNS:temporal-1', 'DNS:temporal-2', 'DNS:localhost', 'IP:127.0.0.1'];

export interface TemporalTlsFiles {
  dir: string;
  /** The authority's certificate: what clients and nodes trust. */
  caFile: string;
  /** The nodes' certificate and key (server, and client between nodes). */
  certFile: string;
  keyFile: string;
}

const filesOf = (dir: string): TemporalTlsFiles => ({
  dir,
  caFile: path.join(dir, 'ca.pem'),
  certFile: path.join(dir, 'node.pem'),
  keyFile: path.join(dir, 'node-key.pem'),
});

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], timeout: 60000 });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new Error("openssl is needed to make the Temporal cluster's certificates: apt-get install openssl", { cause: error });
    throw new Error(`openssl ${args[0]} failed: ${stderr.slice(-500)}`, { cause: error });
  }
}

/**
 * The authority and the nodes' certificate of `dir`, made when missing (ten years; the authority's key
 * stays in `dir`, readable by its owner alone, to sign a new node certificate). Made aside and moved into
 * place whole, by the first of the processes starting at once.
 */
export function ensureTemporalTls(dir: string): TemporalTlsFiles {
  const files = filesOf(dir);
  if ([files.caFile, files.certFile, files.keyFile].every((file) => fs.existsSync(file))) return files;
  fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o700 });
  // Beside its place, so that moving it there is a rename on one filesystem.
  const work = fs.mkdtempSync(path.join(path.dirname(dir), '.temporal-tls-'));
  try {
    const days = String(3650);
    openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'ca-key.pem'], work);
    openssl(
      [
        'req',
        '-x509',
        '-new',
        '-key',
        'ca-key.pem',
        '-sha256',
        '-days',
        days,
        '-subj',
        '/CN=Opsflow Temporal CA',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
        '-out',
        'ca.pem',
      ],
      work,
    );
    openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'node-key.ec.pem'], work);
    // PKCS#8: what Go's TLS loader and every client read alike.
    openssl(['pkcs8', '-topk8', '-nocrypt', '-in', 'node-key.ec.pem', '-out', 'node-key.pem'], work);
    openssl(['req', '-new', '-key', 'node-key.pem', '-subj', '/CN=temporal', '-out', 'node.csr'], work);
    fs.writeFileSync(
      path.join(work, 'node.ext'),
      `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=${NODE_NAMES.join(',')}\n`,
    );
    openssl(
      [
        'x509',
        '-req',
        '-in',
        'node.csr',
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca-key.pem',
        '-CAcreateserial',
        '-days',
        days,
        '-sha256',
        '-extfile',
        'node.ext',
        '-out',
        'node.pem',
      ],
      work,
    );
    for (const name of ['ca-key.pem', 'node-key.pem']) fs.chmodSync(path.join(work, name), 0o600);
    for (const name of ['node.csr', 'node.ext', 'node-key.ec.pem', 'ca.srl']) fs.rmSync(path.join(work, name), { force: true });
    // Whole, or not at all; a process that lost the race to another keeps the other's files.
    fs.chmodSync(work, 0o755);
    try {
      fs.renameSync(work, dir);
    } catch (error) {
      if (!['EEXIST', 'ENOTEMPTY'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return files;
}

/** What a client of the cluster needs to verify it: the authority, and the name its certificate is checked for. */
export function clientTlsOf(caFile: string | null): { serverRootCACertificate: Buffer; serverNameOverride: string } | null {
  return caFile ? { serverRootCACertificate: fs.readFileSync(caFile), serverNameOverride: TEMPORAL_TLS_SERVER_NAME } : null;
}
