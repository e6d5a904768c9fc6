import { TObject, TSchema, Type } from '@sinclair/typebox';
import { ComponentTypeName, DEFAULT_STAGES, ISO_DURATION } from '../../domain/approvals';
import { archiveWriteProblem } from '../../domain/archival';

/** One field of a component besides `id`, `siteId`, `name` and the lifecycle fields. */
export interface ComponentField {
  /** The JSON name; the column is its snake_case. */
  name: string;
  schema: TSchema;
  /** Written by the collection's create and edit; read-only fields are shown only. */
  writable: boolean;
  /** Stored as jsonb. */
  json?: boolean;
  /** Taken when a create leaves the field out; fields without one are required. */
  default?: unknown;
  /**
   * What a stored value may be, where it is looser than what a write takes: content written before its
   * type's `data` had fields keeps its shape, and answers (and restores) still carry it.
   */
  stored?: TSchema;
}

export interface ComponentType {
  type: ComponentTypeName;
  table: string;
  collection: string;
  /** Content entities keep the published state as `published_snapshot` and are served by the runtime. */
  content: boolean;
  /** The runtime path under `/api/public/sites/{siteId}/`, for content served to visitors. */
  publicPath?: string;
  fields: ComponentField[];
  /** Collection routes the type's own module answers instead (assets are created by upload). */
  ownRoutes?: Array<'create' | 'list' | 'delete'>;
  /**
   * The role that creates, edits, restores, publishes, archives and deletes it (EDITOR unless said).
   * Approval chains are ADMIN's: an editor who could rewrite one could approve their own work.
   */
  authorRole?: 'EDITOR' | 'ADMIN';
  /**
   * Why a write to an entity (`current`, the row now) or one that would make it `next` is refused: an edit,
   * restore, publish or archive. The API answers it 403 ARCHIVE_READ_ONLY. Null when allowed. Archive files
   * are records (assets in `/archive`).
   */
  refuseWrite?: (current: Record<string, unknown>, next?: Record<string, unknown>) => string | null;
}

const Slug = Type.String({ minLength: 1, maxLength: 200, pattern: '^[a-z0-9][a-z0-9-]*$' });
const Text = (maxLength: number) => Type.String({ maxLength });

/**
 * A text in both languages. The console shows the two side by side, the Arabic right to left; a published
 * read in one language falls back to the other where a text is empty. `x-format: html` marks rich text.
 */
const Bilingual = (maxLength: number, format?: 'html') =>
  Type.Object(
    { en: Type.Optional(Type.String({ maxLength })), ar: Type.Optional(Type.String({ maxLength })) },
    { additionalProperties: false, 'x-bilingual': true, ...(format ? { 'x-format': format } : {}) },
  );
const OneOf = (...values: string[]) => Type.Union(values.map((value) => Type.Literal(value)));
/** Free JSON, where the type says so: the console edits it as JSON. */
const FreeJson = (description: string) => Type.Unknown({ description, 'x-free-json': true });

/**
 * A content type's `data`: its typed fields, each optional, and any other key as free JSON (content written
 * before the types had fields keeps its keys). The console builds its form from this schema.
 */
const ContentData = (fields: Record<string, TSchema>) =>
  Type.Object(Object.fromEntries(Object.entries(fields).map(([name, schema]) => [name, Type.Optional(schema)])), {
    additionalProperties: FreeJson('a key the type does not name'),
  });

const CONTENT_DATA: Record<string, TObject> = {
  PAGE: ContentData({
    heading: Bilingual(500),
    summary: Bilingual(2000),
    body: Bilingual(1_000_000, 'html'),
    layout: Type.String({ maxLength: 200, description: "the slug of the page's layout" }),
    indexing: OneOf('index', 'noindex'),
  }),
  PAGE_LAYOUT: ContentData({
    template: OneOf('one-column', 'two-columns', 'sidebar-left', 'sidebar-right'),
    columns: Type.Integer({ minimum: 1, maximum: 4 }),
    regions: FreeJson('the named regions and what fills them'),
  }),
  PORTLET: ContentData({
    kind: OneOf('html', 'feed', 'search', 'form'),
    heading: Bilingual(500),
    body: Bilingual(1_000_000, 'html'),
    refreshSeconds: Type.Integer({ minimum: 0, maximum: 86400 }),
    settings: FreeJson("the portlet kind's own settings"),
  }),
  WEB_CONTENT: ContentData({
    heading: Bilingual(500),
    summary: Bilingual(2000),
    body: Bilingual(1_000_000, 'html'),
    showFrom: Type.String({ format: 'date', maxLength: 10 }),
  }),
  NAVIGATION: ContentData({
    label: Bilingual(200),
    position: OneOf('header', 'footer', 'sidebar'),
    items: FreeJson('the links: label, href and children'),
  }),
  DYNAMIC_FORM: ContentData({
    heading: Bilingual(500),
    submitLabel: Bilingual(100),
    notifyEmail: Type.String({ format: 'email', maxLength: 254 }),
    maxSubmissions: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    fields: FreeJson('the form fields: name, kind, label and rules'),
  }),
};

const content = (type: ComponentTypeName, table: string, collection: string, publicPath?: string): ComponentType => ({
  type,
  table,
  collection,
  content: true,
  publicPath,
  fields: [
    { name: 'slug', schema: Slug, writable: true },
    { name: 'title', schema: Type.String({ minLength: 1, maxLength: 500 }), writable: true },
    { name: 'data', schema: CONTENT_DATA[type], writable: true, json: true, stored: Type.Record(Type.String(), Type.Unknown()) },
  ],
});

export const ApprovalStage = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    role: Type.Union([Type.Literal('MANAGER'), Type.Literal('ADMIN'), Type.Literal('EDITOR')]),
    /** Named users decide the stage (the role then does not); each is emailed when it is reached. */
    assignees: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$', description: 'a user id, as its token names it' }), {
        minItems: 1,
        maxItems: 20,
        uniqueItems: true,
      }),
    ),
    remindAfter: Type.Optional(Type.String({ pattern: ISO_DURATION, maxLength: 40, description: 'ISO 8601 duration, e.g. P2D' })),
    escalateAfter: Type.Optional(Type.String({ pattern: ISO_DURATION, maxLength: 40, description: 'ISO 8601 duration, e.g. P3D' })),
  },
  { additionalProperties: false },
);

/** The ten versioned types. An eleventh is a table and its `_aud` table in a migration, and a line here. */
export const COMPONENT_TYPES: readonly ComponentType[] = [
  content('PAGE', 'content.page', '/api/content/pages', 'pages'),
  content('PAGE_LAYOUT', 'content.page_layout', '/api/content/page-layouts'),
  content('PORTLET', 'content.portlet', '/api/content/portlets'),
  content('WEB_CONTENT', 'content.web_content', '/api/content/web-content', 'web-content'),
  content('NAVIGATION', 'content.navigation', '/api/content/navigation', 'navigation'),
  content('DYNAMIC_FORM', 'forms.dynamic_form', '/api/forms', 'forms'),
  {
    type: 'ASSET',
    table: 'assets.asset',
    collection: '/api/assets',
    content: false,
    ownRoutes: ['create', 'list', 'delete'],
    refuseWrite: archiveWriteProblem,
    fields: [
      { name: 'folder', schema: Type.String({ maxLength: 512, pattern: '^/([A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*)?$' }), writable: true },
      { name: 'contentType', schema: Type.String(), writable: false },
      { name: 'sizeBytes', schema: Type.Integer(), writable: false },
      { name: 'sha256', schema: Type.String(), writable: false },
    ],
  },
  {
    type: 'EMAIL_TEMPLATE',
    table: 'email.email_template',
    collection: '/api/email/templates',
    content: false,
    fields: [
      { name: 'roleKey', schema: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()]), writable: true, default: null },
      // Bulk mail carries one-click unsubscribe (RFC 8058) and is not sent to whoever used it; transactional never.
      { name: 'category', schema: Type.Union([Type.Literal('transactional'), Type.Literal('bulk')]), writable: true, default: 'transactional' },
      { name: 'subjectEn', schema: Text(998), writable: true },
      { name: 'bodyEn', schema: Text(1_000_000), writable: true },
      { name: 'subjectAr', schema: Text(998), writable: true },
      { name: 'bodyAr', schema: Text(1_000_000), writable: true },
    ],
  },
  {
    type: 'SOAP_COMPONENT',
    table: 'integration.soap_component',
    collection: '/api/integration/soap-components',
    content: false,
    fields: [
      { name: 'serviceUrl', schema: Type.String({ maxLength: 2048, pattern: '^https?://', 'x-http-url': true }), writable: true },
      { name: 'soapMethodName', schema: Type.String({ minLength: 1, maxLength: 200 }), writable: true },
      { name: 'sampleRequest', schema: Text(1_000_000), writable: true },
    ],
  },
  {
    type: 'WORKFLOW_DEFINITION',
    table: 'workflow.workflow_definition',
    collection: '/api/workflow/definitions',
    content: false,
    authorRole: 'ADMIN',
    fields: [{ name: 'stages', schema: Type.Array(ApprovalStage, { minItems: 1, maxItems: 10 }), writable: true, json: true, default: DEFAULT_STAGES }],
  },
];

export function componentType(type: string): ComponentType | undefined {
  return COMPONENT_TYPES.find((candidate) => candidate.type === type);
}

/** A type a workflow names: one the registry must have (an error otherwise, retried like any other). */
export function registeredComponentType(type: string): ComponentType {
  const found = componentType(type);
  if (!found) throw new Error(`${type} is not a registered component type`);
  return found;
}

export const columnOf = (field: string) => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** The names of a content type's bilingual `data` fields: what a read in one language may fill from the other. */
export function bilingualFields(type: ComponentType): string[] {
  const data = type.fields.find((field) => field.name === 'data')?.schema as TObject | undefined;
  if (!type.content || !data?.properties) return [];
  return Object.entries(data.properties)
    .filter(([, schema]) => (schema as Record<string, unknown>)['x-bilingual'] === true)
    .map(([name]) => name);
}
