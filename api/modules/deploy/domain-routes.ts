import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { domainsOf, DomainRow, setDomainsOf } from '../../../data/deploy/domains';
import { checkedHostnames } from './hostnames';
import { serviceGuards } from './service-guards';
import { DomainsAnswer, DomainsBody, ServiceParams } from './schemas';

const present = (service: string, rows: DomainRow[]) => ({
  service,
  domains: rows.map((row) => ({
    hostname: row.hostname,
    state: row.certificate_state,
    notAfter: row.not_after ? row.not_after.toISOString() : null,
    problem: row.problem,
  })),
});

/** The hostnames a deployed service answers on at the edge, besides its path. */
export function domainRoutes(deps: AppDeps): AnyRoute[] {
  const { db, config } = deps;
  const { dynamicService } = serviceGuards(deps);
  return [
    defineRoute({
      method: 'get',
      path: '/api/infra/services/:name/domains',
      tag: 'infra',
      summary: "A service's hostnames, each with its certificate's state",
      access: access.roles('ADMIN'),
      params: ServiceParams,
      responses: { 200: { description: 'the hostnames', schema: DomainsAnswer } },
      errors: ['SERVICE_NOT_FOUND', 'SERVICE_NOT_DYNAMIC'],
      handler: async (ctx, { params }) => {
        const service = await dynamicService(params.name);
        ctx.body = present(service.name, await domainsOf(db, service.id));
      },
    }),
    defineRoute({
      method: 'put',
      path: '/api/infra/services/:name/domains',
      tag: 'infra',
      summary: "Set a service's hostnames (the whole list): the edge routes each to it, on every path",
      access: access.roles('ADMIN'),
      params: ServiceParams,
      body: DomainsBody,
      responses: { 200: { description: 'the hostnames now', schema: DomainsAnswer } },
      errors: ['SERVICE_NOT_FOUND', 'SERVICE_NOT_DYNAMIC', 'DOMAIN_INVALID', 'DOMAIN_TAKEN'],
      handler: async (ctx, { params, body }) => {
        const service = await dynamicService(params.name);
        ctx.body = present(service.name, await setDomainsOf(db, service.id, checkedHostnames(body.domains, config.publicUrl)));
      },
    }),
  ];
}
