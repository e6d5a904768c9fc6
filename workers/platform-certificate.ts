import { hostnameProblem, normalHostname } from '../domain/service-domains';
import { ensureCertificateRows, findCertificate } from '../data/deploy/certificates';
import { startCertificateRuns } from '../temporal-config/dispatchers';
import { WorkerDeps } from './deps';

/**
 * The platform's own hostname (PUBLIC_URL's) gets a certificate as a service's does, when it is a name an ACME
 * server can check: not localhost, not an address. Once one is served, the renewal schedule keeps it.
 */
export async function ensurePlatformCertificate({ db, config, temporal }: Pick<WorkerDeps, 'db' | 'config' | 'temporal'>): Promise<void> {
  const hostname = normalHostname(new URL(config.api.publicUrl).hostname);
  if (hostnameProblem(hostname) !== null) return;
  await ensureCertificateRows(db, [hostname]);
  if ((await findCertificate(db, hostname))?.chain_pem) return;
  await startCertificateRuns(temporal.client, [{ hostname, renewal: false }]);
}
