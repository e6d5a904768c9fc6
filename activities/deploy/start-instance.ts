import { DeploymentRow, findDeployment, findService } from '../../data/deploy/registry';
import { recordServiceEvents } from '../../data/deploy/events';
import { effectiveLimits, ServiceLimits, StartedInstance } from '../../domain/deploy';
import { containerName, containerSpec } from './container-spec';
import { DeployDeps } from './deps';
import { ensureNetworkOf } from './service-network';
import { finalFailure } from '../failures';

/**
 * Creates and starts containers of a deploy's image, one per instance id the workflow chose: each container
 * is named after its id, so a retry finds (and starts) the ones it already created.
 */
export function startInstances(deps: DeployDeps) {
  const start = startContainer(deps);
  return async (input: { deploymentId: string; instanceIds: string[] }): Promise<StartedInstance[]> => {
    const deployment = await findDeployment(deps.db, input.deploymentId);
    if (!deployment) throw finalFailure('NOT_FOUND', `No deployment ${input.deploymentId}.`);
    return Promise.all(input.instanceIds.map((instanceId) => start(deployment, instanceId)));
  };
}

/** One container per activity: what deploy runs started before INSTANCES_AS_ONE_STEP still call. */
export function startInstance(deps: DeployDeps) {
  const start = startContainer(deps);
  return async (input: { deploymentId: string; instanceId: string }): Promise<StartedInstance> => {
    const deployment = await findDeployment(deps.db, input.deploymentId);
    if (!deployment) throw finalFailure('NOT_FOUND', `No deployment ${input.deploymentId}.`);
    return start(deployment, input.instanceId);
  };
}

/** The limits a deployment's new instances start with (see effectiveLimits). */
export async function limitsForDeployment({ db, config }: Pick<DeployDeps, 'db' | 'config'>, deployment: DeploymentRow): Promise<ServiceLimits> {
  const service = await findService(db, deployment.service_name);
  return effectiveLimits({
    service: service?.limits ?? null,
    deployment: deployment.settings.limits,
    isCurrent: service?.current_deployment_id === deployment.id,
    defaults: { memoryMb: config.deploy.memoryMb, cpus: config.deploy.cpus, pids: config.deploy.pidsLimit },
  });
}

function startContainer({ db, docker, config }: DeployDeps) {
  return async (deployment: DeploymentRow, instanceId: string): Promise<StartedInstance> => {
    const limits = await limitsForDeployment({ db, config }, deployment);
    const network = await ensureNetworkOf({ docker, config }, deployment.service_name, 'bridge');
    const spec = containerSpec({
      serviceName: deployment.service_name,
      scope: config.deploy.scope,
      deploymentId: deployment.id,
      instanceId,
      image: deployment.image,
      settings: deployment.settings,
      network,
      hostBind: config.deploy.hostBind,
      memoryMb: limits.memoryMb,
      pidsLimit: limits.pids,
      cpus: limits.cpus,
      log: { maxSize: config.deploy.logMaxSize, maxFiles: config.deploy.logMaxFiles },
    });
    const name = containerName({ scope: config.deploy.scope, serviceName: deployment.service_name, instanceId });
    let container = docker.getContainer(name);
    try {
      await container.inspect();
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode !== 404) throw error;
      try {
        container = await docker.createContainer(spec);
      } catch (createError) {
        const status = (createError as { statusCode?: number }).statusCode;
        if (status === 404) throw finalFailure('IMAGE_NOT_FOUND', `Image ${deployment.image} is not on the engine.`);
        throw createError;
      }
    }
    let details = await container.inspect();
    if (!details.State.Running && details.State.Status === 'created') {
      try {
        await container.start();
      } catch (error) {
        throw finalFailure('CONTAINER_START_FAILED', `The container did not start: ${(error as Error).message}`);
      }
      details = await container.inspect();
    }
    const ip = details.NetworkSettings.Networks[network]?.IPAddress;
    await recordServiceEvents(db, deployment.service_name, [
      {
        kind: 'STARTED',
        instanceId,
        detail: `Started from ${deployment.image} with ${limits.memoryMb} MiB, ${limits.cpus} CPU(s), ${limits.pids} processes at most.`,
        dedupeKey: `started:${instanceId}`,
      },
    ]);
    return { instanceId, containerId: details.Id, address: ip ? `${ip}:${deployment.settings.port}` : '' };
  };
}
