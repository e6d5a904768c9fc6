import fs from 'node:fs';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { BaseImageBuildFailed, BaseImageUnavailable, ensureBaseImage } from '../../adapters/deploy/jre-base-image';
import { findDeployment } from '../../data/deploy/registry';
import { uploadedJarDir } from '../../data/deploy/jar-uploads';
import { LABELS } from '../../data/deploy/labels';
import { singleFileTar } from '../../adapters/deploy/single-file-tar';
import { DeployDeps } from './deps';
import { isConflict, isGone, progressEnded } from './docker-errors';
import { removeContainers } from './remove-containers';
import { finalFailure } from '../failures';

/**
 * The base image, chosen per deploy: where missing images are built from Debian packages
 * (DEPLOY_BASE_IMAGE_BUILD=debian, as under `npm start`), a missing one is built now, or waited for when
 * `npm start` is already building it; otherwise it is pulled when the engine lacks it.
 */
async function readyBaseImage({ docker, config }: DeployDeps): Promise<void> {
  if (config.deploy.baseImageBuild !== 'debian') return;
  const context = Context.current();
  let lastLine = '';
  // The heartbeat carries the build's last line, and a cancelled or timed-out attempt ends the build.
  const heartbeat = setInterval(() => context.heartbeat({ stage: 'base image', lastLine }), 5000);
  try {
    await ensureBaseImage({
      docker,
      image: config.deploy.baseImage,
      dockerHost: config.dockerHost,
      say: (line) => {
        lastLine = line;
        context.log.info(line);
      },
      signal: context.cancellationSignal,
    });
  } catch (error) {
    if (error instanceof BaseImageUnavailable) throw finalFailure('BASE_IMAGE_UNAVAILABLE', error.message);
    if (error instanceof BaseImageBuildFailed) throw finalFailure('IMAGE_BUILD_FAILED', error.message);
    throw error;
  } finally {
    clearInterval(heartbeat);
  }
}

/** What the image runs: the JAR, as an unprivileged user, from its own folder. */
const IMAGE_SETTINGS = { User: '65534:65534', WorkingDir: '/app', Entrypoint: ['java', '-jar', '/app/app.jar'] };

/**
 * `registry:5000/scope/name:7` -> what `docker commit` tags: the repository with any registry host, and the tag
 * (a registry's port is not a tag). The swarm driver's `repositoryAndTag` drops the host: it names a push target.
 */
function commitTarget(image: string): { repo: string; tag: string } {
  const colon = image.lastIndexOf(':');
  if (colon <= image.lastIndexOf('/')) return { repo: image, tag: 'latest' };
  return { repo: image.slice(0, colon), tag: image.slice(colon + 1) };
}

/** How the containers JAR images are made from are named: the scope's prefix, then the deployment. */
export const imageContainerPrefix = (scope: string) => `${scope}-image-`;

/** The container an image is made from: named after the deployment, so a retried attempt finds what an earlier one left. */
const imageContainerName = (deps: DeployDeps, deploymentId: string) => `${imageContainerPrefix(deps.config.deploy.scope)}${deploymentId}`;

/**
 * Creates the container the image is made from: the base image with the image's settings, never started.
 * Its labels (scope, deployment) say whose it is: the reconcile removes it once its deployment has ended.
 * A container of its name is an earlier attempt's: it goes, and this attempt makes its own.
 */
async function createImageContainer(deps: DeployDeps, deploymentId: string) {
  const { docker, config } = deps;
  const name = imageContainerName(deps, deploymentId);
  const create = async () => {
    const spec = {
      name,
      Image: config.deploy.baseImage,
      ...IMAGE_SETTINGS,
      Labels: { [LABELS.scope]: config.deploy.scope, [LABELS.deployment]: deploymentId },
      NetworkDisabled: true,
      HostConfig: { NetworkMode: 'none' },
    };
    try {
      return await docker.createContainer(spec);
    } catch (error) {
      if (!isConflict(error)) throw error;
      await removeContainers(docker, [name]);
      return docker.createContainer(spec);
    }
  };
  try {
    return await create();
  } catch (error) {
    if (!isGone(error)) throw error;
  }
  // The base image is missing: pulled, as a build's FROM would.
  try {
    await progressEnded(docker, await docker.pull(config.deploy.baseImage));
  } catch (error) {
    throw finalFailure('IMAGE_BUILD_FAILED', `The base image ${config.deploy.baseImage} could not be pulled: ${(error as Error).message}`);
  }
  return create();
}

/**
 * Makes `{scope}/{name}:{seq}`: the base image plus the uploaded JAR at /app/app.jar, run as an unprivileged
 * user. Not a Dockerfile build: the JAR goes into a container of the base image that is never started, and
 * one commit makes the image with its settings and labels, where the engine's builder commits once per
 * Dockerfile line (about 0.9 s of a warm deploy against 0.2 s; decision 032). The tag is the deploy's own,
 * so a retry finds the image it already made.
 */
export function buildServiceImage(deps: DeployDeps) {
  const { db, docker, config } = deps;
  return async (input: { deploymentId: string }): Promise<{ image: string }> => {
    const deployment = await findDeployment(db, input.deploymentId);
    if (!deployment) throw finalFailure('NOT_FOUND', `No deployment ${input.deploymentId}.`);
    const image = deployment.image;
    const made = await docker
      .getImage(image)
      .inspect()
      .then(
        () => true,
        (error: unknown) => (isGone(error) ? false : Promise.reject(error)),
      );
    if (made) {
      // An attempt that made the image may have ended before it removed its container.
      await removeContainers(docker, [imageContainerName(deps, input.deploymentId)]);
      return { image };
    }
    const jar = path.join(uploadedJarDir(config.dataDir, input.deploymentId), 'app.jar');
    if (!fs.existsSync(jar)) {
      throw finalFailure('JAR_MISSING', `The uploaded JAR of deployment ${input.deploymentId} is gone.`);
    }
    await readyBaseImage(deps);
    const heartbeat = setInterval(() => Context.current().heartbeat({ stage: 'image' }), 5000);
    try {
      const container = await createImageContainer(deps, input.deploymentId);
      try {
        await container.putArchive(singleFileTar({ name: 'app/app.jar', filePath: jar }), { path: '/' });
        await container.commit({
          _query: { container: container.id, ...commitTarget(image), comment: `the JAR of deployment ${input.deploymentId} on ${config.deploy.baseImage}` },
          _body: { ...IMAGE_SETTINGS, Labels: { [LABELS.scope]: config.deploy.scope, [LABELS.service]: deployment.service_name } },
        });
      } finally {
        // One that cannot be removed now is removed by the next attempt, or by the reconcile when none follows.
        await container.remove({ force: true, v: true }).catch(() => undefined);
      }
    } finally {
      clearInterval(heartbeat);
    }
    return { image };
  };
}
