import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { conflict, PlatformError } from '../../../lib/errors';
import { openRollout } from '../../../data/deploy/rollouts';
import { serviceGuards } from './service-guards';
import { answerWithin, temporalCallError } from '../../../temporal-config/temporal-errors';
import { abortRolloutUpdate, deployWorkflowId, promoteRolloutUpdate } from '../../../workflows/deploy/definitions';
import { RolloutDecisionAnswer, ServiceParams } from './schemas';

const ANSWER_WITHIN_MS = 30000;

/** An operator acting on a canary rollout before its judge does: promote it to every request, or revert it. */
export function rolloutRoutes(deps: AppDeps): AnyRoute[] {
  const { db, temporal } = deps;
  const { serviceOr404 } = serviceGuards(deps);
  const decide = (kind: 'promote' | 'abort') =>
    defineRoute({
      method: 'post',
      path: `/api/infra/services/:name/rollout/${kind}`,
      tag: 'infra',
      summary:
        kind === 'promote'
          ? "Promote a service's canary now: it takes every request, and the deploy switches to it"
          : "Abort a service's rollout now: every request goes back to the current version, and the canary is removed",
      access: access.roles('ADMIN'),
      params: ServiceParams,
      responses: { 200: { description: 'the rollout, as it stood when the decision was taken', schema: RolloutDecisionAnswer } },
      errors: ['SERVICE_NOT_FOUND', 'NO_ROLLOUT_IN_PROGRESS', 'TEMPORAL_UNAVAILABLE'],
      handler: async (ctx, { params, identity }) => {
        await serviceOr404(params.name);
        const deployment = await openRollout(db, params.name);
        const none = () => conflict('NO_ROLLOUT_IN_PROGRESS', `${params.name} has no rollout step in progress.`);
        if (!deployment?.run_id) throw none();
        const handle = temporal.client.workflow.getHandle(deployWorkflowId(params.name), deployment.run_id);
        try {
          const update = kind === 'promote' ? promoteRolloutUpdate : abortRolloutUpdate;
          const rollout = await answerWithin(ANSWER_WITHIN_MS, handle.executeUpdate(update, { args: [{ by: identity.id }] }));
          ctx.body = { deploymentId: deployment.id, rollout };
        } catch (error) {
          if (error instanceof PlatformError) throw error;
          throw temporalCallError(error, { notFound: ['NO_ROLLOUT_IN_PROGRESS', `${params.name}'s rollout has ended.`] });
        }
      },
    });
  return [decide('promote'), decide('abort')];
}
