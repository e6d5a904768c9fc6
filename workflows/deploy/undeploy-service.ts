import { deployActivities } from './activities';
import { UndeployServiceInput } from './definitions';

/** Removes a deployed service: deregister first (the gateway stops routing), then its containers, its images, its registry row. */
export async function undeployService(input: UndeployServiceInput): Promise<{ containersRemoved: number; imagesRemoved: number }> {
  const act = deployActivities({ healthTimeoutSeconds: 0 });
  await act.deregisterService({ serviceName: input.serviceName });
  const containers = await act.removeServiceContainers({ serviceName: input.serviceName });
  const images = await act.removeServiceImages({ serviceName: input.serviceName });
  await act.deleteService({ serviceName: input.serviceName });
  return { containersRemoved: containers.removed, imagesRemoved: images.removed };
}
