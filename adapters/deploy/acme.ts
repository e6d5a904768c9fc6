import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import * as acme from 'acme-client';

/**
 * The ACME server (RFC 8555) that issues the edge's certificates: Let's Encrypt in production, Pebble under
 * `npm start` and in tests. A thin layer over acme-client; the account's key and URL are kept in the
 * database, so any step may run in a new process after a crash.
 */

export interface AcmeSettings {
  directoryUrl: string;
  /** The address the ACME server may write to about the account, or null. */
  email: string | null;
  /** The CA bundle the ACME server's own HTTPS certificate must chain to; null for the system's. */
  caFile: string | null;
}

/** A challenge the edge answers at `/.well-known/acme-challenge/{token}` (HTTP-01). */
export interface Http01Answer {
  token: string;
  keyAuthorization: string;
}

/** An order's authorisations as the ACME server judges them now, with its own problem for a refused one. */
export type OrderValidation = { state: 'VALID' } | { state: 'PENDING' } | { state: 'INVALID'; problem: string };

/** A new ECDSA P-256 private key in PEM: for the account and for each certificate. */
export const newPrivateKey = (): string =>
  crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

// acme-client sends every request through one axios instance: the CA bundle is set on it once per process.
let trustedCaFile: string | null | undefined;
function trustAcmeServer(caFile: string | null): void {
  if (trustedCaFile === caFile) return;
  acme.axios.defaults.httpsAgent = caFile ? new https.Agent({ ca: fs.readFileSync(caFile) }) : undefined;
  // Temporal retries a failed step with its own backoff; the library's own retries would only hide the time.
  (acme.axios.defaults as { acmeSettings?: { retryMaxAttempts: number } }).acmeSettings!.retryMaxAttempts = 1;
  trustedCaFile = caFile;
}

/** The ACME server's own words for a refused authorisation: its problem's type and detail. */
function problemOf(authorization: acme.Authorization): string {
  const refused = authorization.challenges.find((challenge) => challenge.status === 'invalid' && challenge.error);
  const error = refused?.error as { type?: string; detail?: string } | undefined;
  if (!error) return `the authorisation for ${authorization.identifier.value} is ${authorization.status}`;
  return [error.type, error.detail].filter(Boolean).join(': ');
}

/**
 * The ACME server under the platform's account: `account.url` once registered; without one the first call
 * registers the key (an ACME server answers the same account for the same key) and `registered` keeps it.
 */
export function acmeServer(settings: AcmeSettings, account: { key: string; url: string | null; registered: (url: string) => Promise<void> }) {
  trustAcmeServer(settings.caFile);
  const client = new acme.Client({ directoryUrl: settings.directoryUrl, accountKey: account.key, ...(account.url ? { accountUrl: account.url } : {}) });
  let accountUrl = account.url;
  const ensureAccount = async () => {
    if (accountUrl) return;
    await client.createAccount({ termsOfServiceAgreed: true, ...(settings.email ? { contact: [`mailto:${settings.email}`] } : {}) });
    accountUrl = client.getAccountUrl();
    await account.registered(accountUrl);
  };
  const orderAt = async (orderUrl: string) => {
    await ensureAccount();
    return client.getOrder({ url: orderUrl } as acme.Order);
  };
  return {
    /** A new order for `hostname`, and the HTTP-01 answers its authorisations ask for (not yet announced). */
    async placeOrder(hostname: string): Promise<{ orderUrl: string; answers: Http01Answer[] }> {
      await ensureAccount();
      const order = await client.createOrder({ identifiers: [{ type: 'dns', value: hostname }] });
      const answers: Http01Answer[] = [];
      for (const authorization of await client.getAuthorizations(order)) {
        if (authorization.status === 'valid') continue;
        const challenge = authorization.challenges.find((each) => each.type === 'http-01');
        if (!challenge) throw new Error(`the ACME server offers no http-01 challenge for ${hostname}`);
        answers.push({ token: challenge.token, keyAuthorization: await client.getChallengeKeyAuthorization(challenge) });
      }
      return { orderUrl: order.url, answers };
    },
    /** Tells the ACME server that every pending challenge of the order is ready to be checked. */
    async announceChallenges(orderUrl: string): Promise<void> {
      for (const authorization of await client.getAuthorizations(await orderAt(orderUrl))) {
        const challenge = authorization.challenges.find((each) => each.type === 'http-01');
        if (authorization.status === 'pending' && challenge?.status === 'pending') await client.completeChallenge(challenge);
      }
    },
    /** How the order's authorisations stand now. */
    async validation(orderUrl: string): Promise<OrderValidation> {
      const authorizations = await client.getAuthorizations(await orderAt(orderUrl));
      const refused = authorizations.find((authorization) => authorization.status === 'invalid');
      if (refused) return { state: 'INVALID', problem: problemOf(refused) };
      return authorizations.every((authorization) => authorization.status === 'valid') ? { state: 'VALID' } : { state: 'PENDING' };
    },
    /**
     * The order's certificate chain, in PEM: finalised with a CSR for `hostname` signed by `certificateKey`
     * when the order is ready, or downloaded when an earlier try already finalised it.
     */
    async certificate(orderUrl: string, hostname: string, certificateKey: string): Promise<string> {
      let order = await orderAt(orderUrl);
      if (order.status === 'ready') {
        const [, csr] = await acme.crypto.createCsr({ commonName: hostname, altNames: [hostname] }, certificateKey);
        order = await client.finalizeOrder(order, csr);
      }
      if (order.status !== 'valid') order = await client.waitForValidStatus(order);
      return client.getCertificate(order);
    },
  };
}

export type AcmeServer = ReturnType<typeof acmeServer>;
