import { secretKeysOf } from '../../../lib/secrets';
import { acmeServer, AcmeServer, newPrivateKey } from '../../../adapters/deploy/acme';
import { acmeAccount, recordAcmeAccountUrl } from '../../../data/deploy/certificates';
import { DeployDeps } from '../deps';
import { finalFailure } from '../../failures';

/** The configured ACME server, under the platform's account (its key made and sealed on first use). */
export async function acmeOf({ db, config }: DeployDeps): Promise<AcmeServer> {
  if (!config.edge.acme) throw finalFailure('ACME_NOT_CONFIGURED', 'No ACME server is configured (ACME_DIRECTORY_URL).');
  const { directoryUrl } = config.edge.acme;
  const account = await acmeAccount(db, secretKeysOf(config), directoryUrl, newPrivateKey);
  return acmeServer(config.edge.acme, { ...account, registered: (url) => recordAcmeAccountUrl(db, directoryUrl, url) });
}
