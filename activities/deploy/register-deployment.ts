import { instanceAddressesByService, registerHealthyInstances, switchToDeployment } from '../../data/deploy/instances';
import { StartedInstance } from '../../domain/deploy';
import { refusalsAreFinal } from '../final-refusals';
import { DeployDeps } from './deps';
import { untilEdgeRoutes } from './edge-routing';

/**
 * The switch, made before-then-after so no request meets a gap: the new instances join the ones the edge
 * routes to, and once it routes to them, one transaction makes them the service's instances, starts the
 * ones they replace draining and gives the service the deploy's image and settings; it answers once the
 * edge has let the replaced ones go. Repeating it changes nothing more. Answers the replaced instances,
 * for the workflow to stop after draining.
 */
export function registerDeployment({ db, config }: DeployDeps) {
  return async (input: { deploymentId: string; instances: StartedInstance[] }): Promise<{ replacedInstanceIds: string[] }> => {
    const { serviceName } = await refusalsAreFinal(() => registerHealthyInstances(db, input));
    await untilEdgeRoutes(config.edge.adminUrl, { serviceName, routed: input.instances.map((instance) => instance.address) });
    const switched = await refusalsAreFinal(() => switchToDeployment(db, input));
    const replaced = await instanceAddressesByService(db, switched.replacedInstanceIds);
    await untilEdgeRoutes(config.edge.adminUrl, { serviceName, gone: replaced.get(serviceName) ?? [] });
    return switched;
  };
}
