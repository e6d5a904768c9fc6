import { serviceOperations } from './service-operations';
import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { pageQueryFields, pageSchema, presentPage } from '../../http/pagination';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { badRequest, conflict, notFound } from '../../../lib/errors';
import { settleDeadDeploysAtEdge } from './dead-deploys';
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
import { followedLogEvents, lastLogText, logSourcesOf } from './service-logs';
import { deployHistory, instancesOf, rollbackTarget, servicesWithHealthyCounts, setDesiredInstances, setServiceStatusRow } from '../../../data/deploy/services';
import { fairShareOf } from '../../../domain/fairness';

/** What every service route shares: the guards, built once for all of them. */
function servicePlace(deps: AppDeps) {
  const { db } = deps;
  const { serviceOr404, dynamicOr409, engineAnswers } = serviceGuards(deps);
  const notDeploying = async (service: ServiceRow) => {
    const settled = await settleDeadDeploysAtEdge(deps, service.name);
    // A settled deploy may have changed the service's status (back to RUNNING, or the row gone).
    const status = settled.length > 0 ? (await findService(db, service.name))?.status : service.status;
    if (await deployInProgress(db, { name: service.name, status })) {
      throw conflict('DEPLOYMENT_IN_PROGRESS', `A deploy or undeploy of ${service.name} is in progress.`);
    }
  };
  return { deps, db, config: deps.config, docker: deps.docker, temporal: deps.temporal, serviceOr404, dynamicOr409, engineAnswers, notDeploying };
}
type ServicePlace = ReturnType<typeof servicePlace>;

/** The services listed, and one service read with its instances and latest operations. */
function readRoutes({ db, temporal, serviceOr404 }: ServicePlace): AnyRoute[] {
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
  ];
}

/** Scaling a deployed service: the desired count is stored, then a run of the deployments worker makes it so. */
function scaleRoutes({ db, config, temporal, serviceOr404, dynamicOr409, notDeploying }: ServicePlace): AnyRoute[] {
  return [
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
          args: [{ serviceName: service.name, healthTimeoutSeconds: config.deploy.healthTimeoutSeconds, drainSeconds: config.deploy.drainSeconds }],
          priority: fairShareOf('serviceChange'),
          typedSearchAttributes: [{ key: SearchAttributeKeys.ServiceName, value: service.name }],
          alreadyRunningCode: 'DEPLOYMENT_IN_PROGRESS',
        });
      },
    }),
  ];
}

/** Undeploying a deployed service; its status goes back when the run could not start. */
function undeployRoutes({ db, temporal, serviceOr404, dynamicOr409, notDeploying }: ServicePlace): AnyRoute[] {
  return [
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
            priority: fairShareOf('serviceChange'),
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
  ];
}

/** A deployed service's logs: the last lines as text, or followed as server-sent events. */
function logRoutes({ deps, serviceOr404, dynamicOr409, engineAnswers }: ServicePlace): AnyRoute[] {
  return [
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
        const sources = await logSourcesOf(deps, engineAnswers, service.name);
        if (!query.follow) {
          const text = await lastLogText(sources, query.tail, service.env);
          ctx.type = 'text/plain; charset=utf-8';
          ctx.body = text;
          return;
        }
        const { events, stop } = await followedLogEvents(sources, query.tail, service.env);
        ctx.req.on('close', stop);
        events.on('close', stop);
        ctx.set('Cache-Control', 'no-cache');
        ctx.type = 'text/event-stream';
        ctx.body = events;
        events.write(': following\n\n');
      },
    }),
  ];
}

/** A service's deploy history, and a rollback to an earlier successful deploy of it. */
function historyRoutes({ deps, db, docker, serviceOr404, dynamicOr409, engineAnswers }: ServicePlace): AnyRoute[] {
  return [
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

/** The registry's services: list, inspect, scale, undeploy, logs, history and rollback. */
export function serviceRoutes(deps: AppDeps): AnyRoute[] {
  const place = servicePlace(deps);
  // The router matches in this order: keep it.
  return [...readRoutes(place), ...scaleRoutes(place), ...undeployRoutes(place), ...logRoutes(place), ...historyRoutes(place)];
}
