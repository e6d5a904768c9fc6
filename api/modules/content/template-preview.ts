import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { requireSiteMember } from '../../http/identity';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { notFound } from '../../../lib/errors';
import { componentType } from '../../../data/content/component-types';
import { findComponent } from '../../../data/content/components';
import { latestRevision, rowAtRevision } from '../../../data/content/revisions';
import { renderTemplate, TemplateTexts } from '../../../domain/render-template';
import { Revision } from '../../http/common-schemas';
import { IdParams } from './collection-schemas';

const PreviewBody = Type.Object(
  {
    locale: Type.Union([Type.Literal('en'), Type.Literal('ar')]),
    variables: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    revision: Type.Optional(Revision),
  },
  { additionalProperties: false },
);
const PreviewSchema = Type.Object({
  revision: Type.Integer(),
  locale: Type.String(),
  dir: Type.Union([Type.Literal('ltr'), Type.Literal('rtl')]),
  subject: Type.String(),
  html: Type.String(),
  missingVariables: Type.Array(Type.String()),
});

/**
 * `POST /api/email/templates/{id}/preview`: a revision of the template (the latest draft unless named)
 * rendered in one locale with these variables, exactly as a send would render it, and the variables it
 * lacked. Nothing is sent and nothing is logged.
 */
export function templatePreviewRoutes({ db }: AppDeps): AnyRoute[] {
  const TEMPLATE = componentType('EMAIL_TEMPLATE')!;
  return [
    defineRoute({
      method: 'post',
      path: `${TEMPLATE.collection}/:id/preview`,
      tag: 'templates',
      summary: 'Render a revision of an email template (the latest draft by default) in a locale with these variables, without sending',
      access: access.roles('EDITOR', 'MANAGER'),
      params: IdParams,
      body: PreviewBody,
      responses: { 200: { description: 'the rendered subject and body', schema: PreviewSchema } },
      errors: ['NOT_FOUND', 'REVISION_NOT_FOUND'],
      handler: async (ctx, { params, body, identity }) => {
        const template = await findComponent(db, TEMPLATE, params.id);
        if (!template) throw notFound(`No email template ${params.id}.`);
        requireSiteMember(identity, template.site_id);
        const revision = body.revision ?? (await latestRevision(db, TEMPLATE, template.id));
        const texts = (await rowAtRevision(db, TEMPLATE, template.id, revision as number)) as TemplateTexts | undefined;
        if (!texts) throw notFound(`Email template ${params.id} has no revision ${revision}.`, 'REVISION_NOT_FOUND');
        const rendered = renderTemplate(texts, body.variables ?? {}, body.locale);
        ctx.body = {
          revision,
          locale: body.locale,
          dir: body.locale === 'ar' ? 'rtl' : 'ltr',
          subject: rendered.subject,
          html: rendered.html,
          missingVariables: rendered.missingVariables,
        };
      },
    }),
  ];
}
