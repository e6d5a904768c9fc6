import * as wf from '@temporalio/workflow';
import { deployActivities } from './activities';
import { UndeployServiceInput, undeployProgressQuery, UndeployStage } from './definitions';
import { undeployInputProblem } from '../../domain/deploy';
import { refuseInvalidInput } from '../valid-input';

/** Removes a deployed service: deregister first (the gateway stops routing), then its containers, its images, its registry row. */
export async function undeployService(input: UndeployServiceInput): Promise<{ containersRemoved: number; imagesRemoved: number }> {
  refuseInvalidInput(undeployInputProblem(input));
  const act = deployActivities({ healthTimeoutSeconds: 0 });
  let stage: UndeployStage = 'DEREGISTERING';
  wf.setHandler(undeployProgressQuery, () => ({ stage }));
  await act.deregisterService({ serviceName: input.serviceName });
  stage = 'REMOVING_CONTAINERS';
  const containers = await act.removeServiceContainers({ serviceName: input.serviceName });
  stage = 'REMOVING_IMAGES';
  const images = await act.removeServiceImages({ serviceName: input.serviceName });
  stage = 'DELETING';
  await act.deleteService({ serviceName: input.serviceName });
  stage = 'DONE';
  return { containersRemoved: containers.removed, imagesRemoved: images.removed };
}
