import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { SiteId } from '../../http/common-schemas';
import { FAIRNESS_WEIGHT, fairnessKeyOf, PLATFORM_FAIRNESS_KEY } from '../../../domain/fairness';
import { fairnessWeights, setFairnessWeight } from '../../../temporal-config/fairness';

const Owner = Type.Union([SiteId, Type.Literal(PLATFORM_FAIRNESS_KEY)], {
  description: `a site's id, or \`${PLATFORM_FAIRNESS_KEY}\` for the platform's own work (schedules, reconciles, deploys)`,
});
const Weight = Type.Number({ minimum: FAIRNESS_WEIGHT.least, maximum: FAIRNESS_WEIGHT.most });

const OwnerParams = Type.Object({ siteId: Owner });
const WeightBody = Type.Object({ weight: Weight }, { additionalProperties: false });

const WeightSchema = Type.Object({
  fairnessKey: Type.String({ description: "the key the site's runs carry: its id, or a 64-byte form of a longer one" }),
  weight: Weight,
  onEveryQueue: Type.Boolean({ description: 'false when a change reached only some task queues: set it again' }),
});
const WeightsSchema = Type.Object({
  defaultWeight: Type.Number({ description: 'what every key without a weight of its own weighs' }),
  items: Type.Array(WeightSchema),
});

/** Float weights come back from Temporal as 32-bit floats: 0.3 reads 0.30000001192…, so six digits are kept. */
const readable = (weight: number) => Number(weight.toPrecision(6));

/**
 * Each site's share of the shared workers (decision 046): a weight per fairness key, set in Temporal's own
 * configuration of every task queue, and read back from it.
 */
export function fairnessRoutes(deps: Pick<AppDeps, 'temporal'>): AnyRoute[] {
  const { temporal } = deps;
  return [
    defineRoute({
      method: 'get',
      path: '/api/settings/fairness',
      tag: 'settings',
      summary: "Each site's weight on the task queues: a site with twice the weight gets twice the share when work waits",
      access: access.roles('ADMIN'),
      responses: { 200: { description: 'the weights set, as Temporal holds them', schema: WeightsSchema } },
      errors: ['TEMPORAL_UNAVAILABLE'],
      handler: async (ctx) => {
        const items = await fairnessWeights(temporal);
        ctx.body = {
          defaultWeight: FAIRNESS_WEIGHT.standard,
          items: items.map((item) => ({ fairnessKey: item.key, weight: readable(item.weight), onEveryQueue: item.onEveryQueue })),
        };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/api/settings/fairness/:siteId',
      tag: 'settings',
      summary: "Set a site's weight on every task queue (from 0.001 to 1000; every site weighs 1 until set)",
      access: access.roles('ADMIN'),
      params: OwnerParams,
      body: WeightBody,
      responses: { 200: { description: "the weight, as each queue's change answered it", schema: WeightSchema } },
      errors: ['FAIRNESS_WEIGHTS_FULL', 'TEMPORAL_UNAVAILABLE'],
      handler: async (ctx, { params, body, identity }) => {
        const key = fairnessKeyOf(params.siteId);
        const onEveryQueue = await setFairnessWeight(temporal, { key, weight: body.weight, actor: identity.id });
        ctx.body = { fairnessKey: key, weight: readable(Math.fround(body.weight)), onEveryQueue };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/settings/fairness/:siteId',
      tag: 'settings',
      summary: "Take a site's own weight away: it weighs 1 again",
      access: access.roles('ADMIN'),
      params: OwnerParams,
      responses: { 204: { description: 'the weight is gone from every task queue' } },
      errors: ['TEMPORAL_UNAVAILABLE'],
      handler: async (ctx, { params, identity }) => {
        await setFairnessWeight(temporal, { key: fairnessKeyOf(params.siteId), weight: null, actor: identity.id });
        ctx.status = 204;
      },
    }),
  ];
}
