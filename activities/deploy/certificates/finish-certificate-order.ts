import { newPrivateKey } from '../../../adapters/deploy/acme';
import { findCertificate, orderKey, recordIssued } from '../../../data/deploy/certificates';
import { secretKeysOf } from '../../../lib/secrets';
import { DeployDeps } from '../deps';
import { finalFailure } from '../../failures';
import { acmeOf } from './acme-of';

/**
 * Finalises a validated order and stores its certificate with its key: from then on the edge serves it. The
 * key is made once per order and sealed in the database before the CSR names it, so a try after a crash
 * downloads the same certificate and still has its key. It never leaves this activity: the run sees dates only.
 */
export function finishCertificateOrder(deps: DeployDeps) {
  return async (input: { hostname: string; orderUrl: string }): Promise<{ serial: string; notAfter: string }> => {
    const row = await findCertificate(deps.db, input.hostname);
    // An earlier try stored this order's certificate already.
    if (row?.issued_order_url === input.orderUrl && row.serial && row.not_after) {
      return { serial: row.serial, notAfter: row.not_after.toISOString() };
    }
    const keys = secretKeysOf(deps.config);
    const keyPem = await orderKey(deps.db, keys, { hostname: input.hostname, orderUrl: input.orderUrl, make: newPrivateKey });
    if (keyPem === null) throw finalFailure('CERTIFICATE_NOT_WANTED', `${input.hostname} has another order, an uploaded certificate, or no service.`);
    const chainPem = await (await acmeOf(deps)).certificate(input.orderUrl, input.hostname, keyPem);
    const facts = await recordIssued(deps.db, keys, { hostname: input.hostname, chainPem, keyPem, source: 'ACME', orderUrl: input.orderUrl });
    if (!facts) throw finalFailure('CERTIFICATE_NOT_WANTED', `${input.hostname} has an uploaded certificate now, or no service names it.`);
    return { serial: facts.serial, notAfter: facts.notAfter.toISOString() };
  };
}
