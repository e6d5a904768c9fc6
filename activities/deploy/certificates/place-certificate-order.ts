import { findCertificate, recordOrder } from '../../../data/deploy/certificates';
import { DeployDeps } from '../deps';
import { finalFailure } from '../../failures';
import { acmeOf } from './acme-of';

/**
 * Orders a certificate for a hostname: a new order, its HTTP-01 answers stored for the edge to give, then
 * the ACME server told to check them. Safe to repeat: a second try places a new order.
 */
export function placeCertificateOrder(deps: DeployDeps) {
  return async (input: { hostname: string }): Promise<{ orderUrl: string }> => {
    const row = await findCertificate(deps.db, input.hostname);
    if (!row) throw finalFailure('CERTIFICATE_NOT_WANTED', `${input.hostname} is no longer named by any service.`);
    if (row.source !== 'ACME') throw finalFailure('CERTIFICATE_NOT_WANTED', `${input.hostname} is served with an uploaded certificate.`);
    const acme = await acmeOf(deps);
    const { orderUrl, answers } = await acme.placeOrder(input.hostname);
    await recordOrder(deps.db, { hostname: input.hostname, orderUrl, answers });
    await acme.announceChallenges(orderUrl);
    return { orderUrl };
  };
}
