import fs from 'node:fs';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { BaseImageBuildFailed, BaseImageUnavailable, ensureBaseImage } from '../../adapters/deploy/jre-base-image';
import { findDeployment } from '../../data/deploy/registry';
import { uploadedJarDir } from '../../data/deploy/jar-uploads';
import { LABELS } from '../../data/deploy/labels';
import { DeployDeps } from './deps';
import { finalFailure } from '../failures';

interface BuildMessage {
  stream?: string;
  error?: string;
  errorDetail?: { message?: string };
}

/**
 * The base image, chosen per deploy: where missing images are built from Debian packages
 * (DEPLOY_BASE_IMAGE_BUILD=debian, as under `npm start`), a missing one is built now, or waited for when
 * `npm start` is already building it; otherwise the engine pulls it at the build's FROM.
 */
async function readyBaseImage({ docker, config }: DeployDeps): Promise<void> {
  if (config.deployBaseImageBuild !== 'debian') return;
  const context = Context.current();
  let lastLine = '';
  // The heartbeat carries the build's last line, and a cancelled or timed-out attempt ends the build.
  const heartbeat = setInterval(() => context.heartbeat({ stage: 'base image', lastLine }), 5000);
  try {
    await ensureBaseImage({
      docker,
      image: config.deployBaseImage,
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

/**
 * Builds `{scope}/{name}:{seq}` from the base image plus the uploaded JAR. The tag is the deploy's own, so a
 * retry finds the image it already built. The app runs as an unprivileged user.
 */
export function buildServiceImage(deps: DeployDeps) {
  const { db, docker, config } = deps;
  return async (input: { deploymentId: string }): Promise<{ image: string }> => {
    const deployment = await findDeployment(db, input.deploymentId);
    if (!deployment) throw finalFailure('NOT_FOUND', `No deployment ${input.deploymentId}.`);
    const image = deployment.image;
    try {
      await docker.getImage(image).inspect();
      return { image };
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode !== 404) throw error;
    }
    const context = uploadedJarDir(config.dataDir, input.deploymentId);
    if (!fs.existsSync(path.join(context, 'app.jar'))) {
      throw finalFailure('JAR_MISSING', `The uploaded JAR of deployment ${input.deploymentId} is gone.`);
    }
    await readyBaseImage(deps);
    fs.writeFileSync(
      path.join(context, 'Dockerfile'),
      [
        `FROM ${config.deployBaseImage}`,
        'COPY app.jar /app/app.jar',
        'USER 65534:65534',
        'WORKDIR /app',
        'ENTRYPOINT ["java", "-jar", "/app/app.jar"]',
        '',
      ].join('\n'),
    );
    const heartbeat = setInterval(() => Context.current().heartbeat({ stage: 'build' }), 5000);
    try {
      const stream = await docker.buildImage(
        { context, src: ['Dockerfile', 'app.jar'] },
        { t: image, labels: { [LABELS.scope]: config.deployScope, [LABELS.service]: deployment.service_name }, rm: true, forcerm: true },
      );
      const messages = await new Promise<BuildMessage[]>((resolve, reject) =>
        docker.modem.followProgress(stream, (error: Error | null, output: BuildMessage[]) => (error ? reject(error) : resolve(output))),
      );
      const failure = messages.find((message) => message.error);
      if (failure) {
        throw finalFailure('IMAGE_BUILD_FAILED', `The image build failed: ${failure.errorDetail?.message ?? failure.error}`);
      }
    } finally {
      clearInterval(heartbeat);
    }
    return { image };
  };
}
