import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { requireSiteMember } from '../../http/identity';
import { problemBody } from '../../http/problem';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { conflict, notFound, PlatformError } from '../../../lib/errors';
import { componentType } from '../../../data/content/component-types';
import { findComponent } from '../../../data/content/components';
import { rowAtRevision } from '../../../data/content/revisions';
import { DeliveryFailure } from '../../../adapters/messaging/delivery-failure';
import { callPeer, PeerSettings, soapBody } from '../../../adapters/messaging/http-peer';
import { OutboundRefused, outboundPolicyOf } from '../../../adapters/messaging/outbound';
import { SiteId } from '../../http/common-schemas';
import { IdParams } from './collection-schemas';
import { integrationLogOf } from '../../../data/messaging/integration-log';

const InvokeBody = Type.Object(
  {
    variables: Type.Record(Type.String({ pattern: '^[A-Za-z0-9_]{1,64}$' }), Type.Union([Type.String({ maxLength: 100_000 }), Type.Number(), Type.Boolean()]), {
      maxProperties: 200,
    }),
    siteId: Type.Optional(SiteId),
  },
  { additionalProperties: false },
);
const InvokedSchema = Type.Object({ statusCode: Type.Integer(), body: Type.Unknown(), durationMs: Type.Integer() });
const PeerFaultSchema = Type.Object({
  type: Type.String(),
  title: Type.String(),
  status: Type.Literal(502),
  detail: Type.String(),
  code: Type.Literal('PEER_FAULT'),
  fault: Type.Object({ code: Type.Union([Type.String(), Type.Null()]), string: Type.String() }),
});

/**
 * The SOAP tracker: `POST /api/integration/soap-components/{id}/invoke` calls the component's published
 * revision (endpoint, SOAPAction, the request template with each `{{variable}}` escaped for XML) through
 * the outbound guard, and answers the parsed SOAP Body, or the Fault as 502 PEER_FAULT. Every call writes an
 * integration log row stamped with the component's site, credentials masked.
 */
export function soapInvokeRoutes({ db, config, resolveHost }: AppDeps): AnyRoute[] {
  const SOAP = componentType('SOAP_COMPONENT')!;
  return [
    defineRoute({
      method: 'post',
      path: `${SOAP.collection}/:id/invoke`,
      tag: 'soap-components',
      summary: "Invoke a SOAP component's published revision with these variables (an EDITOR of its site, or the internal token)",
      access: access.rolesOrInternal('EDITOR'),
      params: IdParams,
      body: InvokeBody,
      responses: {
        200: { description: "the peer's answer: its status and its SOAP Body, parsed", schema: InvokedSchema },
        502: {
          description: 'PEER_FAULT: the peer answered a SOAP Fault (its code and string); BAD_GATEWAY: no usable answer',
          schema: Type.Union([PeerFaultSchema, Type.Object({ code: Type.Literal('BAD_GATEWAY') })]),
          contentType: 'application/problem+json',
        },
      },
      errors: ['NOT_FOUND', 'COMPONENT_NOT_PUBLISHED', 'OUTBOUND_NOT_ALLOWED', 'PEER_FAULT', 'BAD_GATEWAY'],
      handler: async (ctx, { params, body, identity }) => {
        const component = await findComponent(db, SOAP, params.id);
        if (!component || (body.siteId && body.siteId !== component.site_id))
          throw notFound(`No SOAP component ${params.id}${body.siteId ? ` in site ${body.siteId}` : ''}.`);
        if (identity) requireSiteMember(identity, component.site_id);
        if (component.published_rev === null) throw conflict('COMPONENT_NOT_PUBLISHED', `SOAP component ${params.id} has no published revision to invoke.`);
        const published = (await rowAtRevision(db, SOAP, component.id, component.published_rev)) as {
          service_url: string;
          soap_method_name: string;
          sample_request: string;
        };
        const peer: PeerSettings = {
          transport: 'SOAP',
          service_url: published.service_url,
          soap_method_name: published.soap_method_name,
          sample_request: published.sample_request,
          rest_method_type: null,
          service_username: null,
        };
        const tokens = Object.fromEntries(Object.entries(body.variables).map(([name, value]) => [name, String(value)]));
        const started = Date.now();
        try {
          const answer = await callPeer({
            record: integrationLogOf(db),
            config: peer,
            password: null,
            tokens,
            siteId: component.site_id,
            component: `soap:${String(component.name)}`,
            outbound: outboundPolicyOf(config, 'soap', resolveHost),
          });
          ctx.body = { statusCode: answer.statusCode, body: soapBody(answer.body), durationMs: Date.now() - started };
        } catch (error) {
          if (error instanceof OutboundRefused) throw new PlatformError('OUTBOUND_NOT_ALLOWED', error.message);
          if (!(error instanceof DeliveryFailure)) throw error;
          if (!error.fault) throw new PlatformError('BAD_GATEWAY', error.message);
          ctx.status = 502;
          ctx.type = 'application/problem+json';
          ctx.body = { ...problemBody('PEER_FAULT', error.message), fault: error.fault };
        }
      },
    }),
  ];
}
