import { serviceOperations } from './service-operations';
import { PassThrough, Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { pageQueryFields, pageSchema, presentPage } from '../../http/pagination';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { badRequest, conflict, notFound } from '../../../lib/errors';
import { followLog, followServiceLog, lastLogLines, lastServiceLogLines, taskLogLine } from '../../../adapters/deploy/container-logs';
import { maskSecretValues } from '../../../domain/deploy-secrets';
import { taskInstanceId } from '../../../data/deploy/instances';
import { settleDeadDeploysAtEdge } from './dead-deploys';
import { LABELS, serviceFilters } from '../../../data/deploy/labels';
import { deployInProgress, DeploymentRow, findDeployment, findService, ServiceRow } from '../../../data/deploy/registry';
import { startWorkflow } from '../../../temporal-config/client';
import { SearchAttributeKeys } from '../../../domain/search-attributes';
import { TaskQueues } from '../../../domain/task-queues';
import {
  SCALE_SERVICE_WORKFLOW,
  ScaleServiceWorkflow,
  scaleWorkflowId,
  UNDEPLOY_SERVICE_WORKFLOW,
  UndeployServiceWorkflow,
  undeployWorkflowId,
} from '../../../workflows/deploy/definitions';
import { presentHistoryItem, presentService, presentServiceDetail } from './presenters';
import {
  DeployAcceptedSchema,
  HistoryItemSchema,
  HistoryQuery,
  LogsQuery,
  RollbackBody,
  SCALE_LIMITS,
  ScaleBody,
  ServiceDetailSchema,
  ServiceParams,
  ServiceSummarySchema,
  StartedSchema,
} from './schemas';
import { START_DEPLOY_ERRORS, startDeploy } from './start-deploy';
import { serviceGuards } from './service-guards';
import { deployHistory, instancesOf, rollbackTarget, servicesWithHealthyCounts, setDesiredInstances, setServiceStatusRow } from '../../../data/deploy/services';

/** The registry's services: list, inspect, scale, undeploy, logs, history and rollback. */
export function serviceRoutes(deps: AppDeps): AnyRoute[] {
  const { db, config, docker, temporal } = deps;

  const { serviceOr404, dynamicOr409, engineAnswers } = serviceGuards(deps);
  const notDeploying = async (service: ServiceRow) => {
    const settled = await settleDeadDeploysAtEdge(deps, service.name);
    // A settled deploy may have changed the service's status (back to RUNNING, or the row gone).
    const status = settled.length > 0 ? (await findService(db, service.name))?.status : service.status;
    if (await deployInProgress(db, { name: service.name, status })) {
      throw conflict('DEPLOYMENT_IN_PROGRESS', `A deploy or undeploy of ${service.name} is in progress.`);
    }
  };
  const containersOf = async (name: string) => {
    await engineAnswers();
    const containers = await docker.docker.listContainers({ all: true, filters: serviceFilters(config.deployScope, name) });
    return containers
      .sort((a, b) => a.Created - b.Created)
      .map((container) => ({ id: container.Id, instance: (container.Labels[LABELS.instance] ?? container.Id).slice(0, 8) }));
  };
  /**
   * Where a service's log lines come from, each line with the instance that wrote it (the first 8 characters of
   * its registry id): the docker driver's containers one by one; the swarm's service logs, every task on every node.
   */
  type LogLine = { instance: string; text: string };
  const logSourcesOf = async (
    name: string,
  ): Promise<
    Array<{ last(tail: number): Promise<LogLine[]>; follow(tail: number): Promise<{ lines: Readable; stop(): void }>; read(line: string): LogLine }>
  > => {
    if (config.deployDriver === 'swarm') {
      await engineAnswers();
      const ofTask = (line: { taskId: string | null; text: string }): LogLine => ({
        instance: line.taskId ? taskInstanceId(line.taskId).slice(0, 8) : 'swarm',
        text: line.text,
      });
      // The service's own swarm service, and in a canary rollout its canary's beside it.
      const swarmServices = (await docker.docker.listServices({ filters: serviceFilters(config.deployScope, name) })) as Array<{ Spec: { Name: string } }>;
      return swarmServices
        .map((swarmService) => swarmService.Spec.Name)
        .sort()
        .map((swarmService) => ({
          last: async (tail) => (await lastServiceLogLines(docker.docker, swarmService, tail)).map(ofTask),
          follow: (tail) => followServiceLog(docker.docker, swarmService, tail),
          read: (line) => ofTask(taskLogLine(line)),
        }));
    }
    return (await containersOf(name)).map((container) => ({
      last: async (tail) => (await lastLogLines(docker.docker, container.id, tail)).map((text) => ({ instance: container.instance, text })),
      follow: (tail) => followLog(docker.docker, container.id, tail),
      read: (text) => ({ instance: container.instance, text }),
    }));
  };

  return [
    defineRoute({
      method: 'get',
      path: '/api/infra/services',
      tag: 'infra',
      summary: 'The services, core and deployed, newest first, with their desired and running instances',
      access: access.roles('ADMIN'),
      query: Type.Object({ ...pageQueryFields }),
      responses: { 200: { description: 'a page of services', schema: pageSchema(ServiceSummarySchema) } },
      errors: [],
      handler: async (ctx, { query }) => {
        ctx.body = presentPage(await servicesWithHealthyCounts(db, query), ({ service, healthy }) => presentService(service, healthy));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/infra/services/:name',
      tag: 'infra',
      summary: 'One service with its instances (secret-looking env values masked) and its latest scale and undeploy runs',
      access: access.roles('ADMIN'),
      params: ServiceParams,
      responses: { 200: { description: 'the service', schema: ServiceDetailSchema } },
      errors: ['SERVICE_NOT_FOUND'],
      handler: async (ctx, { params }) => {
        const service = await serviceOr404(params.name);
        const [instances, operations] = await Promise.all([instancesOf(db, service.id), serviceOperations(temporal, service.name)]);
        ctx.body = presentServiceDetail(service, instances, operations);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/infra/services/:name/scale',
      tag: 'infra',
      summary: `Scale a deployed service to ${SCALE_LIMITS.min}-${SCALE_LIMITS.max} instances`,
      access: access.roles('ADMIN'),
      params: ServiceParams,
      body: ScaleBody,
      responses: { 202: { description: 'scaling', schema: StartedSchema } },
      errors: ['INVALID_INSTANCES', 'SERVICE_NOT_FOUND', 'SERVICE_NOT_DYNAMIC', 'DEPLOYMENT_IN_PROGRESS', 'TEMPORAL_UNAVAILABLE'],
      handler: async (ctx, { params, body }) => {
        const { instances } = body;
        if (!Number.isInteger(instances) || instances < SCALE_LIMITS.min || instances > SCALE_LIMITS.max) {
          throw badRequest('INVALID_INSTANCES', `instances must be an integer from ${SCALE_LIMITS.min} to ${SCALE_LIMITS.max}.`);
        }
        const service = await serviceOr404(params.name);
        dynamicOr409(service);
        await notDeploying(service);
        if (service.host_port !== null && instances > 1) {
          throw badRequest('INVALID_INSTANCES', `${service.name} is published on host port ${service.host_port}, which only one instance can hold.`);
        }
        await setDesiredInstances(db, { serviceId: service.id, instances });
        ctx.status = 202;
        ctx.body = await startWorkflow<ScaleServiceWorkflow>(temporal, SCALE_SERVICE_WORKFLOW, {
          workflowId: scaleWorkflowId(service.name),
          taskQueue: TaskQueues.deployments,
          args: [{ serviceName: service.name, healthTimeoutSeconds: config.deployHealthTimeoutSeconds, drainSeconds: config.deployDrainSeconds }],
          typedSearchAttributes: [{ key: SearchAttributeKeys.ServiceName, value: service.name }],
          alreadyRunningCode: 'DEPLOYMENT_IN_PROGRESS',
        });
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/infra/services/:name',
      tag: 'infra',
      summary: 'Undeploy a deployed service: deregister, then remove its containers and images',
      access: access.roles('ADMIN'),
      params: ServiceParams,
      responses: { 202: { description: 'undeploying', schema: StartedSchema } },
      errors: ['SERVICE_NOT_FOUND', 'SERVICE_NOT_DYNAMIC', 'DEPLOYMENT_IN_PROGRESS', 'TEMPORAL_UNAVAILABLE'],
      handler: async (ctx, { params }) => {
        const service = await serviceOr404(params.name);
        dynamicOr409(service);
        await notDeploying(service);
        await setServiceStatusRow(db, { serviceId: service.id, status: 'UNDEPLOYING' });
        try {
          ctx.body = await startWorkflow<UndeployServiceWorkflow>(temporal, UNDEPLOY_SERVICE_WORKFLOW, {
            workflowId: undeployWorkflowId(service.name),
            taskQueue: TaskQueues.deployments,
            args: [{ serviceName: service.name }],
            typedSearchAttributes: [{ key: SearchAttributeKeys.ServiceName, value: service.name }],
            alreadyRunningCode: 'DEPLOYMENT_IN_PROGRESS',
          });
        } catch (error) {
          await setServiceStatusRow(db, { serviceId: service.id, status: service.status });
          throw error;
        }
        ctx.status = 202;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/infra/services/:name/logs',
      tag: 'infra',
      summary: "The service's container logs, each line prefixed with its instance; follow=true streams server-sent events",
      access: access.roles('ADMIN'),
      params: ServiceParams,
      query: LogsQuery,
      responses: { 200: { description: 'the log lines', contentType: 'text/plain' } },
      errors: ['SERVICE_NOT_FOUND', 'SERVICE_NOT_DYNAMIC', 'DOCKER_UNAVAILABLE'],
      handler: async (ctx, { params, query }) => {
        // Lines are masked with the service's env: a service that prints a secret does not leak it here.
        const service = await serviceOr404(params.name);
        dynamicOr409(service);
        const sources = await logSourcesOf(service.name);
        if (!query.follow) {
          const lines: string[] = [];
          for (const source of sources) {
            for (const line of await source.last(query.tail)) lines.push(`[${line.instance}] ${maskSecretValues(line.text, service.env)}`);
          }
          ctx.type = 'text/plain; charset=utf-8';
          ctx.body = lines.length > 0 ? `${lines.join('\n')}\n` : '';
          return;
        }
        const events = new PassThrough();
        const follows = await Promise.all(sources.map((source) => source.follow(query.tail)));
        sources.forEach((source, index) => {
          let pending = '';
          follows[index].lines.on('data', (chunk: Buffer) => {
            const parts = (pending + chunk.toString('utf8')).split('\n');
            pending = parts.pop() ?? '';
            for (const part of parts) {
              const line = source.read(part);
              events.write(`data: [${line.instance}] ${maskSecretValues(line.text, service.env)}\n\n`);
            }
          });
        });
        const stop = () => follows.forEach((follow) => follow.stop());
        ctx.req.on('close', stop);
        events.on('close', stop);
        ctx.set('Cache-Control', 'no-cache');
        ctx.type = 'text/event-stream';
        ctx.body = events;
        events.write(': following\n\n');
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/infra/services/:name/deployments',
      tag: 'infra',
      summary: "The service's deploy history, newest first",
      access: access.roles('ADMIN'),
      params: ServiceParams,
      query: HistoryQuery,
      responses: {
        200: {
          description: 'a page of deploys',
          schema: Type.Object({ items: Type.Array(HistoryItemSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) }),
        },
      },
      errors: [],
      handler: async (ctx, { params, query }) => {
        ctx.body = presentPage(await deployHistory(db, { serviceName: params.name, page: query }), presentHistoryItem);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/infra/services/:name/rollback',
      tag: 'infra',
      summary: 'Bring back the image of an earlier successful deploy (default: the one before the current), without downtime',
      access: access.roles('ADMIN'),
      params: ServiceParams,
      body: RollbackBody,
      bodyOptional: true,
      responses: { 202: { description: 'rolling back', schema: DeployAcceptedSchema } },
      errors: ['SERVICE_NOT_FOUND', 'SERVICE_NOT_DYNAMIC', 'DEPLOYMENT_NOT_FOUND', 'NO_PREVIOUS_VERSION', ...START_DEPLOY_ERRORS],
      handler: async (ctx, { params, body, identity }) => {
        const service = await serviceOr404(params.name);
        dynamicOr409(service);
        const current = service.current_deployment_id ? await findDeployment(db, service.current_deployment_id) : undefined;
        let target: DeploymentRow | undefined;
        if (body.deploymentId) {
          target = await rollbackTarget(db, { serviceName: service.name, deploymentId: body.deploymentId });
          if (!target) throw notFound(`No successful deploy ${body.deploymentId} of ${service.name}.`, 'DEPLOYMENT_NOT_FOUND');
        } else {
          // The last successful deploy that ran a different image than the current one.
          target = await rollbackTarget(db, { serviceName: service.name, current });
        }
        if (!target) throw conflict('NO_PREVIOUS_VERSION', `${service.name} has no earlier successful deploy to roll back to.`);
        await engineAnswers();
        try {
          await docker.docker.getImage(target.image).inspect();
        } catch {
          throw conflict('NO_PREVIOUS_VERSION', `The image ${target.image} of that deploy is gone.`);
        }
        ctx.status = 202;
        ctx.body = await startDeploy(deps, {
          serviceName: service.name,
          kind: target.kind,
          image: target.image,
          jarFile: null,
          settings: target.settings,
          redeploy: true,
          rollbackOf: target.id,
          requestedBy: identity.id,
          warnings: [],
        });
      },
    }),
  ];
}
