import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { badRequest, conflict } from '../../../lib/errors';
import { deployInProgress, ServiceRow } from '../../../data/deploy/registry';
import { runningInstancesOf } from '../../../data/deploy/services';
import { serviceEvents } from '../../../data/deploy/events';
import { readContainerLimits } from '../../../adapters/deploy/container-limits';
import { startWorkflow } from '../../../temporal-config/client';
import { answerWithin, temporalCallError } from '../../../temporal-config/temporal-errors';
import { TaskQueues } from '../../../domain/task-queues';
import { SearchAttributeKeys } from '../../../domain/search-attributes';
import { CHANGE_SERVICE_LIMITS_WORKFLOW, ChangeLimitsInput, ChangeServiceLimitsWorkflow, limitsWorkflowId } from '../../../workflows/deploy/definitions';
import { LIMITS_UNDER_SWARM, limitsInputProblem, ServiceLimits } from '../../../domain/deploy';
import { serviceGuards } from './service-guards';
import { LimitsAnswer, LimitsBody, ServiceEventsAnswer, ServiceEventsQuery, ServiceParams } from './schemas';
import { fairShareOf } from '../../../domain/fairness';

/** How long a limits change may take before the answer says Temporal or its worker did not answer. */
const CHANGE_WITHIN_MS = 60000;

/** The service's running instances with the limits the engine reports for each. */
async function instancesWithLimits({ db, docker }: AppDeps, service: ServiceRow) {
  const instances = await runningInstancesOf(db, service.id);
  return Promise.all(
    instances.map(async (instance) => ({
      id: instance.id,
      containerId: instance.container_id,
      limits: await readContainerLimits(docker.docker, instance.container_id),
    })),
  );
}

/**
 * The change itself is the deployments worker's (`changeServiceLimits`): the API reads the engine and
 * never changes it. It waits for the run's end, so the answer reads back what the engine then reports.
 * The run lives no longer than that wait: a change no worker took in time must not happen after the
 * answer said it did not.
 */
async function changeLimits(temporal: AppDeps['temporal'], input: ChangeLimitsInput): Promise<void> {
  const started = await startWorkflow<ChangeServiceLimitsWorkflow>(temporal, CHANGE_SERVICE_LIMITS_WORKFLOW, {
    workflowId: limitsWorkflowId(input.serviceName),
    taskQueue: TaskQueues.deployments,
    args: [input],
    priority: fairShareOf('serviceChange'),
    workflowExecutionTimeout: CHANGE_WITHIN_MS,
    typedSearchAttributes: [{ key: SearchAttributeKeys.ServiceName, value: input.serviceName }],
    alreadyRunningCode: 'DEPLOYMENT_IN_PROGRESS',
  });
  try {
    await answerWithin(CHANGE_WITHIN_MS, temporal.client.workflow.getHandle<ChangeServiceLimitsWorkflow>(started.workflowId, started.runId).result());
  } catch (error) {
    throw temporalCallError(error, { late: `The limits change of ${input.serviceName} did not end within ${CHANGE_WITHIN_MS / 1000} s: ${started.uiUrl}` });
  }
}

/** A service's limits (read back from the engine, changed in place by a run of the deployments worker) and the history of its instances' events. */
export function limitsRoutes(deps: AppDeps): AnyRoute[] {
  const { db, config, temporal } = deps;
  const defaults: ServiceLimits = { memoryMb: config.deploy.memoryMb, cpus: config.deploy.cpus, pids: config.deploy.pidsLimit };
  const { dynamicService, engineAnswers } = serviceGuards(deps);
  return [
    defineRoute({
      method: 'get',
      path: '/api/infra/services/:name/limits',
      tag: 'infra',
      summary: "A service's limits, and each running instance's as the engine reports them",
      access: access.roles('ADMIN'),
      params: ServiceParams,
      responses: { 200: { description: 'the limits', schema: LimitsAnswer } },
      errors: ['SERVICE_NOT_FOUND', 'SERVICE_NOT_DYNAMIC', 'DOCKER_UNAVAILABLE'],
      handler: async (ctx, { params }) => {
        const service = await dynamicService(params.name);
        await engineAnswers();
        ctx.body = { limits: service.limits ?? defaults, instances: await instancesWithLimits(deps, service) };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/api/infra/services/:name/limits',
      tag: 'infra',
      summary: "Change a service's limits: applied to its running containers in place, kept for the instances it starts later",
      access: access.roles('ADMIN'),
      params: ServiceParams,
      body: LimitsBody,
      responses: { 200: { description: 'the limits, read back from the engine', schema: LimitsAnswer } },
      errors: ['SERVICE_NOT_FOUND', 'SERVICE_NOT_DYNAMIC', 'DEPLOYMENT_IN_PROGRESS', 'LIMITS_NOT_APPLIED', 'DOCKER_UNAVAILABLE', 'TEMPORAL_UNAVAILABLE'],
      handler: async (ctx, { params, body, identity }) => {
        const service = await dynamicService(params.name);
        if (config.deploy.driver === 'swarm') {
          throw badRequest('VALIDATION_FAILED', LIMITS_UNDER_SWARM, [
            { path: 'body', message: 'under DEPLOY_DRIVER=swarm a swarm applies limits by replacing tasks: redeploy with memoryMb, cpus or pids' },
          ]);
        }
        if (await deployInProgress(db, service)) throw conflict('DEPLOYMENT_IN_PROGRESS', `A deploy, scale or undeploy of ${service.name} is in progress.`);
        await engineAnswers();
        const limits: ServiceLimits = { ...(service.limits ?? defaults), ...body };
        const change: ChangeLimitsInput = { serviceName: service.name, limits, by: identity.id };
        // The body is within bounds; what it leaves as it was (the defaults, older limits) may not be.
        const problem = limitsInputProblem(change);
        if (problem) throw badRequest('VALIDATION_FAILED', `The limits would be refused: ${problem}.`, [{ path: 'body', message: problem }]);
        await changeLimits(temporal, change);
        ctx.body = { limits, instances: await instancesWithLimits(deps, service) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/infra/services/:name/events',
      tag: 'infra',
      summary:
        "What became of a service's instances, newest first: started, healthy, unhealthy, exited, killed for memory, restarted, rolled back, limits changed",
      access: access.roles('ADMIN'),
      params: ServiceParams,
      query: ServiceEventsQuery,
      responses: { 200: { description: 'the events', schema: ServiceEventsAnswer } },
      errors: ['SERVICE_NOT_FOUND', 'SERVICE_NOT_DYNAMIC'],
      handler: async (ctx, { params, query }) => {
        const service = await dynamicService(params.name);
        const rows = await serviceEvents(db, { serviceName: service.name, limit: query.limit });
        ctx.body = { items: rows.map((row) => ({ at: new Date(row.at).toISOString(), kind: row.kind, instanceId: row.instance_id, detail: row.detail })) };
      },
    }),
  ];
}
