import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { badRequest, conflict } from '../../../lib/errors';
import { domainsOf, DomainRow, setDomainsOf } from '../../../data/deploy/domains';
import { hostnameProblem, normalHostname, platformHostnames } from '../../../domain/service-domains';
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
  const ownNames = platformHostnames(config.publicUrl);
  /** The asked names in normal form, once each; 400 for a malformed one, 409 for one of the platform's. */
  const checked = (asked: string[]): string[] => {
    const hostnames = [...new Set(asked.map(normalHostname))];
    const issues = hostnames.flatMap((hostname, index) => {
      const problem = hostnameProblem(hostname);
      return problem ? [{ path: `/domains/${index}`, message: `${hostname}: ${problem}` }] : [];
    });
    if (issues.length > 0) throw badRequest('DOMAIN_INVALID', 'A hostname is not one a service may answer on.', issues);
    const taken = hostnames.filter((hostname) => ownNames.includes(hostname));
    if (taken.length > 0) throw conflict('DOMAIN_TAKEN', `The platform answers on ${taken.join(', ')} itself.`);
    return hostnames;
  };
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
        ctx.body = present(service.name, await setDomainsOf(db, service.id, checked(body.domains)));
      },
    }),
  ];
}
