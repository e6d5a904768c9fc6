import { AppDeps } from '../../deps';
import { conflict, notFound, unavailable } from '../../../lib/errors';
import { findService, ServiceRow } from '../../../data/deploy/registry';
import { DOCKER_UNAVAILABLE_DETAIL } from '../../../adapters/docker';

/** The checks every service route makes first: the service exists, is deployed (not a core module), and the engine answers. */
export function serviceGuards({ db, docker }: Pick<AppDeps, 'db' | 'docker'>) {
  const serviceOr404 = async (name: string): Promise<ServiceRow> => {
    const service = await findService(db, name);
    if (!service) throw notFound(`No service ${name}.`, 'SERVICE_NOT_FOUND');
    return service;
  };
  const dynamicOr409 = (service: ServiceRow): ServiceRow => {
    if (!service.dynamic) throw conflict('SERVICE_NOT_DYNAMIC', `${service.name} is a core service, managed through docker compose.`);
    return service;
  };
  /** A deployed service by name: 404 when there is none, 409 for a core module. */
  const dynamicService = async (name: string): Promise<ServiceRow> => dynamicOr409(await serviceOr404(name));
  const engineAnswers = async (): Promise<void> => {
    if (!(await docker.ping())) throw unavailable('DOCKER_UNAVAILABLE', DOCKER_UNAVAILABLE_DETAIL);
  };
  return { serviceOr404, dynamicOr409, dynamicService, engineAnswers };
}
