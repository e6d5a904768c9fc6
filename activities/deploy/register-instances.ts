import { registerHealthyInstances } from '../../data/deploy/instances';
import { StartedInstance } from '../../domain/deploy';
import { refusalsAreFinal } from '../final-refusals';
import { DeployDeps } from './deps';
import { untilEdgeRoutes } from './edge-routing';

/** Adds healthy instances to the ones the gateway routes to (scale up, replacements), and answers once the edge routes to them; repeating adds nothing. */
export function registerInstances({ db, config }: DeployDeps) {
  return async (input: { deploymentId: string; instances: StartedInstance[] }): Promise<void> => {
    const { serviceName } = await refusalsAreFinal(() => registerHealthyInstances(db, input));
    await untilEdgeRoutes(config.edge.adminUrl, { serviceName, routed: input.instances.map((instance) => instance.address) });
  };
}
