import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { badRequest } from '../../../lib/errors';
import { setServiceNotify } from '../../../data/deploy/notices';
import { DeployNotify, deployNotifyProblem } from '../../../domain/deploy';
import { serviceGuards } from './service-guards';
import { NotifyAnswer, NotifyBody, ServiceParams } from './schemas';

/** Who hears of a service's deploys that fail, revert or are rolled back (spec: deployment, third wave). */
export function notifyRoutes(deps: AppDeps): AnyRoute[] {
  const { db } = deps;
  const { dynamicService } = serviceGuards(deps);
  return [
    defineRoute({
      method: 'get',
      path: '/api/infra/services/:name/notify',
      tag: 'infra',
      summary: "Who hears of the service's deploys that fail, revert or are rolled back",
      access: access.roles('ADMIN'),
      params: ServiceParams,
      responses: { 200: { description: 'the owners told, or null', schema: NotifyAnswer } },
      errors: ['SERVICE_NOT_FOUND', 'SERVICE_NOT_DYNAMIC'],
      handler: async (ctx, { params }) => {
        const service = await dynamicService(params.name);
        ctx.body = { notify: service.notify };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/api/infra/services/:name/notify',
      tag: 'infra',
      summary: "Set who hears of the service's deploys that fail, revert or are rolled back: a role's holders in a site, addresses, or both",
      access: access.roles('ADMIN'),
      params: ServiceParams,
      body: NotifyBody,
      responses: { 200: { description: 'the owners told', schema: NotifyAnswer } },
      errors: ['SERVICE_NOT_FOUND', 'SERVICE_NOT_DYNAMIC'],
      handler: async (ctx, { params, body }) => {
        const service = await dynamicService(params.name);
        // Addresses in lower case, each once: `Ops@example.org` and `ops@example.org` are one mailbox to tell.
        const emails = [...new Set((body.emails ?? []).map((email) => email.toLowerCase()))];
        const notify: DeployNotify = { siteId: body.siteId, role: body.role ?? null, emails };
        const problem = deployNotifyProblem(notify);
        if (problem) throw badRequest('VALIDATION_FAILED', 'Nobody would be told.', [{ path: 'body', message: problem }]);
        await setServiceNotify(db, { serviceId: service.id, notify });
        ctx.body = { notify };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/infra/services/:name/notify',
      tag: 'infra',
      summary: "Tell nobody of the service's deploys",
      access: access.roles('ADMIN'),
      params: ServiceParams,
      responses: { 200: { description: 'nobody is told', schema: NotifyAnswer } },
      errors: ['SERVICE_NOT_FOUND', 'SERVICE_NOT_DYNAMIC'],
      handler: async (ctx, { params }) => {
        const service = await dynamicService(params.name);
        await setServiceNotify(db, { serviceId: service.id, notify: null });
        ctx.body = { notify: null };
      },
    }),
  ];
}
