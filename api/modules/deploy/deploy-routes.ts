import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { removeUploads, uploadedFile } from '../../http/uploads';
import { badRequest, notFound, PlatformError } from '../../../lib/errors';
import { findDeployment } from '../../../data/deploy/registry';
import { DEFAULT_HEALTH_PATH, LIMIT_BOUNDS, RolloutPlan, SERVICE_NAME_PATTERN, ServiceLimits } from '../../../domain/deploy';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { inspectJar, JarFacts } from './inspect-jar';
import { Static } from '@sinclair/typebox';
import { presentDeployment } from './presenters';
import {
  DeployAcceptedSchema,
  DeploymentParams,
  DeploymentSchema,
  ImageDeployBody,
  JarDeployFields,
  JarFactsSchema,
  JarInspectFields,
  RolloutBody,
} from './schemas';
import { DeployRequest, START_DEPLOY_ERRORS, startDeploy } from './start-deploy';
import { checkedHostnames } from './hostnames';

const SPRING_BOOT_DEFAULT_PORT = 8080;

/** `ENV_<NAME>` form fields, as the env vars `<NAME>`. */
function envFromFields(fields: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(fields)
      .filter(([key]) => key.startsWith('ENV_'))
      .map(([key, value]) => [key.slice('ENV_'.length), String(value)]),
  );
}

/** The JAR form's `rollout` field: JSON of RolloutBody's shape, checked as the image deploy's body is. */
function rolloutFromField(field: string | undefined): RolloutPlan | null {
  if (!field) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(field);
  } catch {
    throw badRequest('VALIDATION_FAILED', 'The rollout is not JSON.', [{ path: 'body.rollout', message: 'must be a JSON object' }]);
  }
  if (!rolloutShape.Check(parsed)) {
    const issue = [...rolloutShape.Errors(parsed)][0];
    throw badRequest('VALIDATION_FAILED', 'The rollout is not valid.', [{ path: `body.rollout${issue.path.replace(/\//g, '.')}`, message: issue.message }]);
  }
  return { ...parsed, maxP99Ms: parsed.maxP99Ms ?? null };
}
const rolloutShape = TypeCompiler.Compile(RolloutBody);

/** The JAR form's `memoryMb`, `cpus` and `pids` fields, within the bounds the image deploy's body has. */
function limitsFromFields(fields: { memoryMb?: string; cpus?: string; pids?: string }): Partial<ServiceLimits> {
  const limits: Partial<ServiceLimits> = {};
  for (const key of ['memoryMb', 'cpus', 'pids'] as const) {
    if (!fields[key]) continue;
    const value = Number(fields[key]);
    const { min, max } = LIMIT_BOUNDS[key];
    if (!(value >= min && value <= max))
      throw badRequest('VALIDATION_FAILED', 'A limit is out of bounds.', [{ path: `body.${key}`, message: `must be from ${min} to ${max}` }]);
    limits[key] = value;
  }
  return limits;
}

const hostPortWarning = (bind: string, hostPort: number) =>
  `hostPort ${hostPort} is published on ${bind}: requests there reach the service directly, bypassing the gateway and its X-User-* identity.`;

/** A JAR deploy's request: the service's name and port from the form, else from what the JAR says of itself. */
function jarDeployRequest(
  config: AppDeps['config'],
  args: { body: Static<typeof JarDeployFields>; facts: JarFacts; jarFile: string; requestedBy: string },
): DeployRequest {
  const { body, facts } = args;
  const serviceName = body.serviceName || facts.applicationName;
  if (!serviceName) {
    throw badRequest('MISSING_APPLICATION_NAME', 'No serviceName was given and the JAR sets no spring.application.name.');
  }
  if (!new RegExp(SERVICE_NAME_PATTERN).test(serviceName)) {
    throw badRequest('VALIDATION_FAILED', 'The service name is not valid.', [
      { path: 'body.serviceName', message: `${JSON.stringify(serviceName)} must match ${SERVICE_NAME_PATTERN}` },
    ]);
  }
  const port = body.port ? Number(body.port) : (facts.port ?? SPRING_BOOT_DEFAULT_PORT);
  if (port < 1 || port > 65535) throw badRequest('VALIDATION_FAILED', 'The port is not valid.', [{ path: 'body.port', message: 'must be from 1 to 65535' }]);
  return {
    serviceName,
    kind: 'JAR',
    image: null,
    jarFile: args.jarFile,
    settings: {
      port,
      hostPort: null,
      healthPath: body.healthPath || null,
      group: body.group || 'platform',
      description: null,
      env: envFromFields(body),
    },
    redeploy: body.redeploy === 'true',
    rollbackOf: null,
    requestedBy: args.requestedBy,
    warnings: [],
    rollout: rolloutFromField(body.rollout),
    limits: limitsFromFields(body),
    // A blank field, as a form sends an empty one, leaves the hostnames as they are.
    domains: body.domains ? checkedHostnames(body.domains.split(','), config.api.publicUrl) : undefined,
  };
}

/** An image deploy's request: a host port only under the docker driver, and a privileged one only when allowed. */
function imageDeployRequest(config: AppDeps['config'], body: Static<typeof ImageDeployBody>, requestedBy: string): DeployRequest {
  const hostPort = body.hostPort ?? null;
  if (hostPort !== null && config.deploy.driver === 'swarm') {
    // A swarm publishes a port on every address of every node it runs a task on: never on DEPLOY_HOST_BIND alone.
    throw badRequest('VALIDATION_FAILED', 'A host port cannot be published under the swarm driver.', [
      {
        path: 'body.hostPort',
        message: 'must be left out under DEPLOY_DRIVER=swarm: a swarm would publish it on every address of its nodes, past the gateway',
      },
    ]);
  }
  if (hostPort !== null && hostPort < 1024 && !config.deploy.allowLowHostPorts) {
    throw badRequest('VALIDATION_FAILED', 'The host port is privileged.', [
      { path: 'body.hostPort', message: 'must be 1024 or above (DEPLOY_ALLOW_LOW_HOST_PORTS allows lower ones)' },
    ]);
  }
  return {
    serviceName: body.name,
    kind: 'IMAGE',
    image: body.image,
    jarFile: null,
    settings: {
      port: body.port,
      hostPort,
      healthPath: body.healthPath ?? null,
      group: body.group ?? 'platform',
      description: body.description ?? null,
      env: body.envVars ?? {},
    },
    redeploy: body.redeploy ?? false,
    rollbackOf: null,
    requestedBy,
    warnings: hostPort === null ? [] : [hostPortWarning(config.deploy.hostBind, hostPort)],
    rollout: body.rollout ?? null,
    limits: { memoryMb: body.memoryMb, cpus: body.cpus, pids: body.pids },
    domains: body.domains === undefined ? undefined : checkedHostnames(body.domains, config.api.publicUrl),
  };
}

/** The uploaded JAR and what it says of itself, read once, the same way for a deploy and for the form's inspect. */
async function uploadedJar(ctx: Parameters<typeof uploadedFile>[0], maxJarBytes: number) {
  const file = uploadedFile(ctx);
  if (file.size > maxJarBytes) throw new PlatformError('JAR_TOO_LARGE', `The JAR is larger than ${maxJarBytes} bytes.`);
  return { file, facts: await inspectJar(file.filepath, file.size) };
}

/** What a JAR says of itself, as the form's inspect answers it. */
const presentJarFacts = (facts: JarFacts) => ({
  mainClass: facts.mainClass,
  serviceName: facts.applicationName,
  port: facts.port ?? SPRING_BOOT_DEFAULT_PORT,
  portFromJar: facts.port !== null,
});

/** The two ways to deploy, and a deploy's stages. */
export function deployRoutes(deps: AppDeps): AnyRoute[] {
  const { db, config } = deps;
  return [
    defineRoute({
      method: 'post',
      path: '/api/infra/deploy/jar',
      tag: 'infra',
      summary: 'Deploy (or redeploy) a service from a JAR: built on the JRE base image, started, health-checked, routed',
      access: access.roles('ADMIN'),
      body: JarDeployFields,
      bodyType: 'multipart',
      bodyLimitBytes: config.deploy.maxJarBytes,
      tooLargeCode: 'JAR_TOO_LARGE',
      responses: { 202: { description: 'deploying', schema: DeployAcceptedSchema } },
      errors: ['INVALID_JAR', 'UNSAFE_JAR', 'MISSING_APPLICATION_NAME', ...START_DEPLOY_ERRORS],
      handler: async (ctx, { body, identity }) => {
        try {
          const { file, facts } = await uploadedJar(ctx, config.deploy.maxJarBytes);
          ctx.status = 202;
          ctx.body = await startDeploy(deps, jarDeployRequest(config, { body, facts, jarFile: file.filepath, requestedBy: identity.id }));
        } finally {
          await removeUploads(ctx);
        }
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/infra/deploy/jar/inspect',
      tag: 'infra',
      summary: 'What a JAR says of itself (service name, port, main class), read as a deploy would read it; nothing is deployed',
      access: access.roles('ADMIN'),
      body: JarInspectFields,
      bodyType: 'multipart',
      bodyLimitBytes: config.deploy.maxJarBytes,
      tooLargeCode: 'JAR_TOO_LARGE',
      responses: { 200: { description: 'what the JAR says', schema: JarFactsSchema } },
      errors: ['INVALID_JAR', 'UNSAFE_JAR', 'JAR_TOO_LARGE'],
      handler: async (ctx) => {
        try {
          const { facts } = await uploadedJar(ctx, config.deploy.maxJarBytes);
          ctx.body = presentJarFacts(facts);
        } finally {
          await removeUploads(ctx);
        }
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/infra/deploy',
      tag: 'infra',
      summary: 'Deploy (or redeploy) a service from an image on the engine',
      access: access.roles('ADMIN'),
      body: ImageDeployBody,
      responses: { 202: { description: 'deploying', schema: DeployAcceptedSchema } },
      errors: [...START_DEPLOY_ERRORS],
      handler: async (ctx, { body, identity }) => {
        ctx.status = 202;
        ctx.body = await startDeploy(deps, imageDeployRequest(config, body, identity.id));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/infra/deployments/:deploymentId',
      tag: 'infra',
      summary: `A deploy's stage, status and events (the health check defaults to ${DEFAULT_HEALTH_PATH})`,
      access: access.roles('ADMIN'),
      params: DeploymentParams,
      responses: { 200: { description: 'the deploy', schema: DeploymentSchema } },
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params }) => {
        const deployment = await findDeployment(db, params.deploymentId);
        if (!deployment) throw notFound(`No deployment ${params.deploymentId}.`);
        ctx.body = presentDeployment(deployment);
      },
    }),
  ];
}
