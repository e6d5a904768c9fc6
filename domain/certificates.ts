import { createPrivateKey, KeyObject, X509Certificate } from 'node:crypto';

/**
 * The rules of the edge's certificates: when one is renewed, what a chain says about itself, and whether an
 * uploaded certificate and key may be served for a hostname.
 */

export type CertificateState = 'PENDING' | 'ISSUED' | 'FAILED';
export type CertificateSource = 'ACME' | 'UPLOADED';

/** A certificate is renewed once two thirds of its lifetime have passed, as Let's Encrypt advises. */
export const RENEW_AT_FRACTION = 2 / 3;

export function renewAtOf(notBefore: Date, notAfter: Date): Date {
  return new Date(notBefore.getTime() + (notAfter.getTime() - notBefore.getTime()) * RENEW_AT_FRACTION);
}

/** How long before an uploaded certificate ends its owners are told, at the latest. */
export const UPLOAD_WARNING_DAYS = 30;

/**
 * When the owners of an uploaded certificate are told it ends soon: 30 days before it ends, or at two thirds
 * of its lifetime (when ACME would renew one of its own) if that comes later, for a short-lived one.
 */
export function uploadWarningAt(notBefore: Date, notAfter: Date): Date {
  const monthBefore = notAfter.getTime() - UPLOAD_WARNING_DAYS * 86400000;
  return new Date(Math.max(renewAtOf(notBefore, notAfter).getTime(), monthBefore));
}

/** What the first certificate of a PEM chain says about itself. */
export interface CertificateFacts {
  serial: string;
  notBefore: Date;
  notAfter: Date;
  /** The DNS names it is valid for (its subject alternative names). */
  names: string[];
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/** The certificates of a PEM chain, leaf first. */
export const certificatesOf = (chainPem: string): string[] => chainPem.match(PEM_BLOCK) ?? [];

export function certificateFacts(chainPem: string): CertificateFacts {
  const [leafPem] = certificatesOf(chainPem);
  if (!leafPem) throw new Error('the chain holds no certificate');
  const leaf = new X509Certificate(leafPem);
  const names = (leaf.subjectAltName ?? '')
    .split(', ')
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice('DNS:'.length).toLowerCase());
  return { serial: leaf.serialNumber.toLowerCase(), notBefore: new Date(leaf.validFrom), notAfter: new Date(leaf.validTo), names };
}

/** Whether `names` (a certificate's) cover `hostname`, a wildcard covering one label. */
export function namesCover(names: string[], hostname: string): boolean {
  return names.some((name) => name === hostname || (name.startsWith('*.') && hostname.slice(hostname.indexOf('.') + 1) === name.slice(2)));
}

/** The keys Envoy serves: RSA of 2048 bits or more, ECDSA on P-256 or P-384. */
function servableKeyProblem(key: KeyObject): string | null {
  const { asymmetricKeyType: type, asymmetricKeyDetails: details } = key;
  if (type === 'rsa' && (details?.modulusLength ?? 0) >= 2048) return null;
  if (type === 'ec' && ['prime256v1', 'secp384r1'].includes(details?.namedCurve ?? '')) return null;
  const what = type === 'rsa' ? `RSA of ${details?.modulusLength} bits` : type === 'ec' ? `ECDSA on ${details?.namedCurve}` : (type ?? 'unknown');
  return `the edge serves RSA keys of 2048 bits or more and ECDSA keys on P-256 or P-384, not ${what}`;
}

/**
 * Why an uploaded chain and key may not be served for `hostname`, or null when they may: the chain must parse,
 * name the hostname, be valid now, and belong to a key the edge serves. Envoy refuses the whole HTTPS
 * listener over one key it cannot use, so every other name's change would wait on it.
 */
export function uploadProblem(hostname: string, chainPem: string, keyPem: string, now: Date): string | null {
  let facts: CertificateFacts;
  try {
    facts = certificateFacts(chainPem);
  } catch {
    return 'the certificate is not a PEM certificate chain';
  }
  if (!namesCover(facts.names, hostname)) return `the certificate does not name ${hostname} (it names ${facts.names.join(', ') || 'no DNS name'})`;
  if (facts.notAfter <= now) return `the certificate expired at ${facts.notAfter.toISOString()}`;
  if (facts.notBefore > now) return `the certificate is not valid before ${facts.notBefore.toISOString()}`;
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
    const leaf = new X509Certificate(certificatesOf(chainPem)[0]);
    if (!leaf.checkPrivateKey(key)) return 'the private key does not belong to the certificate';
  } catch {
    return 'the private key is not a PEM private key';
  }
  return servableKeyProblem(key);
}
