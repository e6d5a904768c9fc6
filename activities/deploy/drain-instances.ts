import { drainInstanceRows, instanceAddressesByService } from '../../data/deploy/instances';
import { DeployDeps } from './deps';
import { untilEdgeRoutes } from './edge-routing';

/** Stops routing new requests to instances, and answers once the edge has let them go (they finish what they already have before they are removed). */
export function drainInstances({ db, config }: DeployDeps) {
  return async (input: { instanceIds: string[] }): Promise<void> => {
    await drainInstanceRows(db, input.instanceIds);
    for (const [serviceName, gone] of await instanceAddressesByService(db, input.instanceIds))
      await untilEdgeRoutes(config.edge.adminUrl, { serviceName, gone });
  };
}
