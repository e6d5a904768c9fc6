import { INSTANCE_TABLE, SERVICE_TABLE } from '../../data/deploy/registry';
import { DeployDeps } from './deps';

/** Undeploy's first step: the gateway stops routing to the service before any container stops. */
export function deregisterService({ db }: DeployDeps) {
  return async (input: { serviceName: string }): Promise<void> => {
    const service = await db(SERVICE_TABLE).where({ name: input.serviceName, dynamic: true }).first('id');
    if (service) await db(INSTANCE_TABLE).where({ service_id: service.id }).delete();
  };
}
