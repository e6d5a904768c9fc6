import { deleteServiceRow } from '../../data/deploy/instances';
import { DeployDeps } from './deps';

/** Undeploy's last step: the registry forgets the service (its deploy history stays), and its route answers 404. */
export function deleteService({ db }: DeployDeps) {
  return async (input: { serviceName: string }): Promise<void> => {
    await deleteServiceRow(db, input.serviceName);
  };
}
