import { setRunningServiceStatus } from '../../data/deploy/instances';
import { ServiceStatus } from '../../domain/deploy';
import { DeployDeps } from './deps';

/** RUNNING when a scale or reconcile reached the desired count, DEGRADED when it could not; only for running services. */
export function setServiceStatus({ db }: DeployDeps) {
  return async (input: { serviceName: string; status: Extract<ServiceStatus, 'RUNNING' | 'DEGRADED'> }): Promise<void> => {
    await setRunningServiceStatus(db, input);
  };
}
