import { Type } from '@sinclair/typebox';
import { COMPONENT_TYPE_NAMES } from '../../../domain/approvals';
import { Revision, SiteId } from '../../http/common-schemas';

export const ComponentTypeName = Type.Union(COMPONENT_TYPE_NAMES.map((name) => Type.Literal(name)));
const Uuid = Type.String({ format: 'uuid' });

export const PolicyBody = Type.Object(
  {
    componentType: ComponentTypeName,
    siteId: Type.Union([SiteId, Type.Null()], { description: 'null: the global policy' }),
    workflowDefinitionId: Type.Optional(Type.Union([Uuid, Type.Null()], { description: 'null: one MANAGER stage' })),
    enabled: Type.Boolean(),
  },
  { additionalProperties: false },
);

export const PolicyIdParams = Type.Object({ id: Uuid });
export const CorrelationParams = Type.Object({ correlationId: Uuid });

export const SubmitBody = Type.Object(
  {
    componentType: ComponentTypeName,
    siteId: SiteId,
    // Every versioned type's id is a uuid: the approval locks the resource's row by it.
    resourceId: Uuid,
    revision: Revision,
    callbackPath: Type.String({ maxLength: 1000, pattern: '^/api/[A-Za-z0-9/_.~-]+$' }),
    requestedBy: Type.String({ minLength: 1, maxLength: 200 }),
    title: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

export const QueueQuery = Type.Object({ status: Type.Optional(Type.Union([Type.Literal('PENDING'), Type.Literal('APPROVED'), Type.Literal('REJECTED')])) });

export const DecideBody = Type.Object(
  { decision: Type.Union([Type.Literal('APPROVED'), Type.Literal('REJECTED')]), comment: Type.Optional(Type.String({ maxLength: 2000 })) },
  { additionalProperties: false },
);
