import { deregisterServiceInstances } from '../../data/deploy/instances';
import { DeployDeps } from './deps';

/** Undeploy's first step: the gateway stops routing to the service before any container stops. */
export function deregisterService({ db }: DeployDeps) {
  return async (input: { serviceName: string }): Promise<void> => {
    await deregisterServiceInstances(db, input.serviceName);
  };
}
