import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { badRequest, PlatformError } from '../../../lib/errors';
import { secretKeysOf } from '../../../lib/secrets';
import { uploadProblem } from '../../../domain/certificates';
import { normalHostname } from '../../../domain/service-domains';
import { domainsOf, DomainRow, setDomainsOf } from '../../../data/deploy/domains';
import { challengeAnswer, recordIssued, resetCertificate } from '../../../data/deploy/certificates';
import { startCertificateRuns } from '../../../temporal-config/dispatchers';
import { checkedHostnames } from './hostnames';
import { serviceGuards } from './service-guards';
import { CertificateUpload, ChallengeParams, DomainParams, DomainsAnswer, DomainsBody, ServiceParams } from './schemas';

const present = (service: string, rows: DomainRow[]) => ({
  service,
  domains: rows.map((row) => ({
    hostname: row.hostname,
    state: row.state,
    source: row.source,
    notAfter: row.not_after ? row.not_after.toISOString() : null,
    problem: row.problem,
  })),
});

/**
 * With an ACME server, a run for each of the hostnames that waits for a certificate: a new name, or one whose
 * last try failed (setting the list again is how an operator asks for another try after fixing DNS).
 */
export async function certificateRunsFor(deps: Pick<AppDeps, 'config' | 'temporal' | 'logger'>, rows: DomainRow[]): Promise<void> {
  if (!deps.config.edge.acme) return;
  const waiting = rows.filter((row) => row.source === 'ACME' && row.state !== 'ISSUED');
  try {
    await startCertificateRuns(
      deps.temporal.client,
      waiting.map((row) => ({ hostname: row.hostname, renewal: false })),
    );
  } catch (error) {
    // The names are set already: the renewal schedule starts their runs at its next look.
    deps.logger.warn({ err: error, hostnames: waiting.map((row) => row.hostname) }, 'certificate runs not started; the renewal schedule will');
  }
}

/** A deployed service and one of its hostnames, or 404 DOMAIN_NOT_FOUND. */
async function serviceAndHostname(deps: AppDeps, params: { name: string; hostname: string }) {
  const service = await serviceGuards(deps).dynamicService(params.name);
  const hostname = normalHostname(params.hostname);
  if (!(await domainsOf(deps.db, service.id)).some((row) => row.hostname === hostname)) {
    throw new PlatformError('DOMAIN_NOT_FOUND', `${service.name} does not answer on ${hostname}.`);
  }
  return { service, hostname };
}

/** The hostnames a deployed service answers on at the edge, besides its path, and their certificates. */
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
      summary: "Set a service's hostnames (the whole list): the edge routes each to it, on every path, and ACME certifies each",
      access: access.roles('ADMIN'),
      params: ServiceParams,
      body: DomainsBody,
      responses: { 200: { description: 'the hostnames now', schema: DomainsAnswer } },
      errors: ['SERVICE_NOT_FOUND', 'SERVICE_NOT_DYNAMIC', 'DOMAIN_INVALID', 'DOMAIN_TAKEN'],
      handler: async (ctx, { params, body }) => {
        const service = await dynamicService(params.name);
        const rows = await setDomainsOf(db, service.id, checkedHostnames(body.domains, config.api.publicUrl));
        await certificateRunsFor(deps, rows);
        ctx.body = present(service.name, rows);
      },
    }),
    defineRoute({
      method: 'put',
      path: '/api/infra/services/:name/domains/:hostname/certificate',
      tag: 'infra',
      summary: "Serve an organisation's own certificate and key for one of the service's hostnames, in place of ACME's",
      access: access.roles('ADMIN'),
      params: DomainParams,
      body: CertificateUpload,
      responses: { 200: { description: 'the hostnames now (the key is never answered)', schema: DomainsAnswer } },
      errors: ['SERVICE_NOT_FOUND', 'SERVICE_NOT_DYNAMIC', 'DOMAIN_NOT_FOUND', 'CERTIFICATE_INVALID'],
      handler: async (ctx, { params, body }) => {
        const { service, hostname } = await serviceAndHostname(deps, params);
        const problem = uploadProblem(hostname, body.certificate, body.privateKey, new Date());
        if (problem) throw badRequest('CERTIFICATE_INVALID', `This certificate cannot be served for ${hostname}: ${problem}.`);
        await recordIssued(db, secretKeysOf(config), { hostname, chainPem: body.certificate, keyPem: body.privateKey, source: 'UPLOADED', orderUrl: null });
        ctx.body = present(service.name, await domainsOf(db, service.id));
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/infra/services/:name/domains/:hostname/certificate',
      tag: 'infra',
      summary: "Forget the certificate of one of the service's hostnames (an upload, say): ACME gets a new one",
      access: access.roles('ADMIN'),
      params: DomainParams,
      responses: { 200: { description: 'the hostnames now', schema: DomainsAnswer } },
      errors: ['SERVICE_NOT_FOUND', 'SERVICE_NOT_DYNAMIC', 'DOMAIN_NOT_FOUND'],
      handler: async (ctx, { params }) => {
        const { service, hostname } = await serviceAndHostname(deps, params);
        await resetCertificate(db, hostname);
        const rows = await domainsOf(db, service.id);
        await certificateRunsFor(deps, rows);
        ctx.body = present(service.name, rows);
      },
    }),
    acmeChallengeRoute(deps),
  ];
}

/** Where an ACME server checks an HTTP-01 challenge: public, on every hostname the edge routes here. */
function acmeChallengeRoute({ db }: AppDeps): AnyRoute {
  return defineRoute({
    method: 'get',
    path: '/.well-known/acme-challenge/:token',
    tag: 'infra',
    summary: "The answer to an ACME server's HTTP-01 challenge for a certificate the platform ordered",
    access: access.public,
    params: ChallengeParams,
    responses: { 200: { description: 'the key authorisation', contentType: 'text/plain' } },
    errors: ['ACME_CHALLENGE_NOT_FOUND'],
    handler: async (ctx, { params }) => {
      // Only for the name the order is for: a token is no answer on any other host.
      const answer = await challengeAnswer(db, { token: params.token, hostname: normalHostname(ctx.hostname) });
      if (answer === null) throw new PlatformError('ACME_CHALLENGE_NOT_FOUND', 'No certificate order holds this token.');
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = answer;
    },
  });
}
