import { AppDeps } from '../../deps';
import { settleDeadDeploys } from '../../../data/deploy/dead-deploys';
import { instanceAddressesOfDeployments } from '../../../data/deploy/instances';
import { edgeLetGo } from '../../../edge/admin';
import { runStatusOf } from '../../../temporal-config/client';

/**
 * How long the API waits for the edge to stop routing to what a settled run left, before it answers anyway.
 * Longer than the control plane's resync (10 s): a rewrite whose notification was lost is made by then.
 */
const EDGE_LET_GO_MS = 15000;
const POLL_MS = 200;

/**
 * Settles the service's deploy runs that died unfinished (data/deploy/dead-deploys) and answers once the
 * edge no longer routes to what they left (a canary's share, instances registered before a switch): the
 * registry drops them in the settle's transaction, but Envoy takes the rewrite a moment later, and an
 * operation answered in between would let the dead run's version serve after the platform said it was
 * settled. An edge that does not confirm within the bound is logged, and the operation goes on.
 */
export async function settleDeadDeploysAtEdge(deps: Pick<AppDeps, 'db' | 'temporal' | 'config' | 'logger'>, serviceName: string): Promise<string[]> {
  const settled = await settleDeadDeploys(deps.db, { serviceName, runStatusOf: runStatusOf(deps.temporal) });
  const adminUrl = deps.config.edge.adminUrl;
  if (settled.length === 0 || !adminUrl) return settled;
  const addresses = await instanceAddressesOfDeployments(deps.db, settled);
  const started = Date.now();
  let looks = 0;
  let unanswered = 0;
  for (;;) {
    // Null: the admin did not answer in time (a loaded machine). That is no answer, so it is asked again.
    const letGo = await edgeLetGo(adminUrl, { serviceName, addresses });
    looks++;
    if (letGo === null) unanswered++;
    if (letGo === true) return settled;
    if (Date.now() - started > EDGE_LET_GO_MS) {
      deps.logger.warn(
        { serviceName, settled, looks, unanswered },
        `the edge has not confirmed it stopped routing to the settled deploys of ${serviceName} within ${EDGE_LET_GO_MS} ms; going on`,
      );
      return settled;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
