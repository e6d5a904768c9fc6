import path from 'node:path';
import Docker from 'dockerode';
import { createDocker, DOCKER_UNAVAILABLE_DETAIL } from '../../adapters/docker';
import { baseImageState, ensureBaseImage } from '../../adapters/deploy/jre-base-image';
import { withProgress } from '../progress';
import { step, stops } from './lifecycle';
import { closeEdgeDoor, ensureSwarm, openEdgeDoor, startRegistry, swarmAdvertiseAddress } from './swarm';

// What `npm start` prepares for deploys: the JAR base image, and with DEPLOY_DRIVER=swarm the swarm.

/** Where the embedded registry of the swarm driver listens, when DEPLOY_REGISTRY does not name one. */
export const EMBEDDED_REGISTRY_PORT = 5000;
/** The container through which the edge on the host reaches the swarm's overlays. */
const EDGE_DOOR = 'opsflow-edge-door';

/**
 * DEPLOY_DRIVER=swarm on one machine: the engine becomes a swarm manager, Debian's docker-registry runs on
 * loopback unless DEPLOY_REGISTRY names one, and the edge (a process on this host) gets its door into the
 * services' overlays. Answers the settings the platform's processes then run with.
 */
export async function embeddedSwarm(dataDir: string, env: NodeJS.ProcessEnv): Promise<NodeJS.ProcessEnv> {
  if (env.DEPLOY_DRIVER !== 'swarm') return {};
  const dockerHost = env.DOCKER_HOST || null;
  const docker = createDocker({ dockerHost }).docker;
  const advertiseAddress = await swarmAdvertiseAddress(docker, { configured: env.SWARM_ADVERTISE_ADDR || null });
  await ensureSwarm(docker, { advertiseAddress });
  step('the Docker engine is a swarm manager');
  const settings: NodeJS.ProcessEnv = {};
  if (!env.DEPLOY_REGISTRY) {
    const registry = await startRegistry({
      port: EMBEDDED_REGISTRY_PORT,
      dir: path.join(dataDir, 'registry'),
      logFile: path.join(dataDir, 'logs', 'registry.log'),
    });
    stops.push({ name: 'registry', stop: registry.stop });
    step(`registry (docker-registry) on ${registry.address}`);
    settings.DEPLOY_REGISTRY = registry.address;
  }
  // The door runs on the base image: it must exist before the door opens.
  if (env.DEPLOY_BASE_IMAGE_BUILD === 'debian') await readyBaseImageNow(docker, { image: env.DEPLOY_BASE_IMAGE!, dockerHost });
  await openEdgeDoor(docker, { name: EDGE_DOOR, image: env.DEPLOY_BASE_IMAGE! });
  stops.push({ name: 'edge door', stop: () => closeEdgeDoor(docker, EDGE_DOOR) });
  step(`the edge reaches the services' overlays through ${EDGE_DOOR}`);
  const attach = env.DEPLOY_ATTACH_CONTAINERS;
  settings.DEPLOY_ATTACH_CONTAINERS = attach ? `${attach},${EDGE_DOOR}` : EDGE_DOOR;
  return settings;
}

/** The JRE base image `npm start` builds from Debian packages when DEPLOY_BASE_IMAGE names no other. */
const LOCAL_JRE_IMAGE = 'opsflow/jre:17';

/**
 * The base image of JAR deploys: the contract's default is a public image, which a machine without an image
 * registry cannot pull, so when DEPLOY_BASE_IMAGE names none `npm start` runs JAR deploys on a JRE image
 * built here from Debian packages (DEPLOY_BASE_IMAGE_BUILD=debian). An image the user names is theirs: it
 * is built only when they say DEPLOY_BASE_IMAGE_BUILD=debian too. Answers the settings to add.
 */
export function chooseBaseImage(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env.DEPLOY_BASE_IMAGE) return {};
  return { DEPLOY_BASE_IMAGE: LOCAL_JRE_IMAGE, DEPLOY_BASE_IMAGE_BUILD: env.DEPLOY_BASE_IMAGE_BUILD || 'debian' };
}

/** Builds the base image now, saying what it does; Ctrl-C ends the build with the platform. */
async function readyBaseImageNow(docker: Docker, { image, dockerHost }: { image: string; dockerHost: string | null }): Promise<void> {
  const building = new AbortController();
  const stop = { name: 'the JAR base image build', stop: async () => building.abort() };
  stops.push(stop);
  try {
    await withProgress(`building the JAR base image ${image} from Debian packages`, step, () =>
      ensureBaseImage({ docker, image, dockerHost, say: (line) => step(`  ${line}`), signal: building.signal }),
    );
  } finally {
    stops.splice(stops.indexOf(stop), 1);
  }
}

/**
 * Says once what JAR deploys will find: no engine (every deploy refused with the fix), the base image
 * missing and not buildable (JAR deploys refused, naming debootstrap), or missing and buildable: then it is
 * built in the background, saying how it goes, and a JAR deploy that comes meanwhile waits for it.
 */
export async function prepareDeploys(env: NodeJS.ProcessEnv, dockerHost: string | null): Promise<void> {
  const handle = createDocker({ dockerHost });
  if (!(await handle.ping())) {
    step(`Docker engine: not answering. Deploys are refused until it does (${DOCKER_UNAVAILABLE_DETAIL.replace(/^The Docker engine does not answer: /, '')})`);
    return;
  }
  const image = env.DEPLOY_BASE_IMAGE!;
  if (env.DEPLOY_BASE_IMAGE_BUILD !== 'debian') {
    step(`JAR deploys on ${image}`);
    return;
  }
  const found = await baseImageState(handle.docker, image);
  if (found.state === 'present') {
    step(`JAR deploys on ${image}`);
  } else if (found.state === 'unavailable') {
    step(`JAR deploys: refused until the base image can be had. ${found.reason}`);
  } else {
    step(`JAR deploys on ${image}: missing, built in the background (a JAR deploy meanwhile waits for it)`);
    readyBaseImageNow(handle.docker, { image, dockerHost }).catch((error: Error) =>
      step(`the JAR base image was not built: ${error.message} (the next JAR deploy tries again)`),
    );
  }
}
