import { SERVICE_TABLE } from '../../data/deploy/registry';
import { DeployDeps } from './deps';

/** Undeploy's last step: the registry forgets the service (its deploy history stays), and its route answers 404. */
export function deleteService({ db }: DeployDeps) {
  return async (input: { serviceName: string }): Promise<void> => {
    await db(SERVICE_TABLE).where({ name: input.serviceName, dynamic: true }).delete();
  };
}
