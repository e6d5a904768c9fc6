import { useState } from 'react';
import { Button, Code, Group, NativeSelect, Paper, SimpleGrid, Stack, Text, Textarea, TextInput, Timeline, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, dataOr, usePagedList } from '../api/client';
import { useLocalised, useWords } from '../i18n';
import { Link, navigate } from '../router';
import { useSession } from '../session';
import { MoreButton, ReadOnlyNote, Section, SitePicker, useSiteChoice, StatusBadge, TemporalLink, ActionButton } from '../ui/bits';
import { PagedTable } from '../ui/DataTable';
import { ProblemAlert } from '../ui/ProblemAlert';
import { RevisionCompare } from './RevisionCompare';
import { ScheduleItem } from './Scheduled';
import { bodySchemaOf, FieldSchema, issuesByField, SchemaFields, useJsonDrafts, useOpenApi } from './ContentForm';
import { PublishedReads } from './PublishedReads';
import { SiteLanguageSetting } from './SiteLanguageSetting';

/**
 * The versioned types edited here, by the name in the console's address and their collection in the API
 * (email templates have a screen of their own; assets are created by upload). Their forms come from the API.
 */
export const CONTENT_TYPES = {
  pages: '/api/content/pages',
  'page-layouts': '/api/content/page-layouts',
  portlets: '/api/content/portlets',
  'web-content': '/api/content/web-content',
  navigation: '/api/content/navigation',
  forms: '/api/forms',
  'soap-components': '/api/integration/soap-components',
  'workflow-definitions': '/api/workflow/definitions',
} as const;
type TypeKey = keyof typeof CONTENT_TYPES;
const isTypeKey = (value: string | undefined): value is TypeKey => value !== undefined && value in CONTENT_TYPES;

// Every collection answers the same routes with its own fields: the pages' typed paths stand for all of them.
type Collection = '/api/content/pages';
const collectionOf = (type: TypeKey) => CONTENT_TYPES[type] as Collection;
const itemPath = (type: TypeKey) => `${CONTENT_TYPES[type]}/{id}` as '/api/content/pages/{id}';

const STATUSES = ['DRAFT', 'PENDING_APPROVAL', 'PUBLISHED', 'REJECTED', 'ARCHIVED'] as const;

const WORDS = {
  en: {
    heading: 'Content',
    type: 'Type',
    anyStatus: 'Any status',
    name: 'Name',
    publishedRev: 'Live revision',
    updated: 'Updated',
    newDraft: 'New draft',
    create: 'Create the draft',
    edit: 'Edit the draft',
    saveDraft: 'Save as a new revision',
    editComment: 'What changed (kept with the revision)',
    draft: 'The latest draft',
    history: 'History',
    rev: 'Revision',
    atRevision: 'At revision',
    view: 'View',
    restore: 'Restore as draft',
    publish: 'Publish',
    archive: 'Archive',
    comment: 'Comment for the approvers',
    pending: 'Waiting for approval',
    published: 'Published revision',
    back: 'Back to the list',
  },
  ar: {
    heading: 'المحتوى',
    type: 'النوع',
    anyStatus: 'أي حالة',
    name: 'الاسم',
    publishedRev: 'المراجعة المنشورة',
    updated: 'آخر تحديث',
    newDraft: 'مسودة جديدة',
    create: 'أنشئ المسودة',
    edit: 'حرّر المسودة',
    saveDraft: 'احفظ كمراجعة جديدة',
    editComment: 'ما الذي تغيّر (يُحفظ مع المراجعة)',
    draft: 'أحدث مسودة',
    history: 'السجل',
    rev: 'المراجعة',
    atRevision: 'عند المراجعة',
    view: 'اعرض',
    restore: 'استعد كمسودة',
    publish: 'انشر',
    archive: 'أرشف',
    comment: 'تعليق للمعتمدين',
    pending: 'بانتظار الموافقة',
    published: 'المراجعة المنشورة',
    back: 'عودة إلى القائمة',
  },
};

/** What every entity carries besides its own fields. */
const BOOKKEEPING = new Set([
  'id',
  'siteId',
  'status',
  'publishedRev',
  'publishedAt',
  'publishedSnapshot',
  'createdBy',
  'updatedBy',
  'createdAt',
  'updatedAt',
  'rev',
]);

/** An entity's own fields, without the bookkeeping. */
function ownFields(entity: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(entity).filter(([key]) => !BOOKKEEPING.has(key)));
}

/** A body with every required object (a content type's `data`) present, empty, for the form to fill. */
function emptyBody(schema: FieldSchema): Record<string, unknown> {
  return Object.fromEntries((schema.required ?? []).filter((key) => schema.properties?.[key]?.type === 'object').map((key) => [key, {}]));
}

function NewDraft({ type, siteId }: { type: TypeKey; siteId: string }) {
  const words = useWords(WORDS);
  const openapi = useOpenApi();
  const schema = bodySchemaOf(openapi.data, CONTENT_TYPES[type], 'post');
  const [name, setName] = useState('');
  const [fields, setFields] = useState<Record<string, unknown> | null>(null);
  const json = useJsonDrafts();
  const create = useMutation({
    mutationFn: async () => dataOr(await api.POST(collectionOf(type), { body: { ...fields, siteId, name } as never })),
    onSuccess: (created) => navigate(`/content/${type}/${created.id}`),
  });
  if (!schema) return openapi.error ? <ProblemAlert error={openapi.error} /> : null;
  return (
    <Section title={words.newDraft} gap="xs">
      <TextInput label={words.name} value={name} onChange={(event) => setName(event.currentTarget.value)} error={issuesByField(create.error).name} />
      <SchemaFields schema={schema} omit={['siteId', 'name']} value={fields ?? emptyBody(schema)} onChange={setFields} error={create.error} {...json} />
      {create.error && <ProblemAlert error={create.error} />}
      <Group>
        <ActionButton action={create} disabled={!siteId || !name.trim() || json.invalid}>
          {words.create}
        </ActionButton>
      </Group>
    </Section>
  );
}

/** The draft in its type's form: saving it writes a new revision with the editor's comment. */
type EditDraftProps = { type: TypeKey; draft: Record<string, unknown> & { id: string; name: string }; onSaved: () => void };

/** The draft's form, once the API's schema is here: the form's fields start from the draft's values the schema names. */
function EditDraft(props: EditDraftProps) {
  const openapi = useOpenApi();
  const schema = bodySchemaOf(openapi.data, `${CONTENT_TYPES[props.type]}/{id}`, 'put');
  if (!schema) return openapi.error ? <ProblemAlert error={openapi.error} /> : null;
  return <EditDraftForm {...props} schema={schema} />;
}

function EditDraftForm({ type, draft, onSaved, schema }: EditDraftProps & { schema: FieldSchema }) {
  const words = useWords(WORDS);
  const editable = Object.keys(schema.properties ?? {}).filter((key) => key !== 'name' && key !== 'comment');
  const [name, setName] = useState(draft.name);
  const [fields, setFields] = useState<Record<string, unknown>>(() =>
    Object.fromEntries(Object.entries(draft).filter(([key, value]) => editable.includes(key) && value !== null)),
  );
  const [comment, setComment] = useState('');
  const json = useJsonDrafts();
  const save = useMutation({
    mutationFn: async () =>
      dataOr(
        await api.PUT(itemPath(type), {
          params: { path: { id: draft.id } },
          body: { ...fields, name, ...(comment.trim() ? { comment: comment.trim() } : {}) } as never,
        }),
      ),
    onSuccess: onSaved,
  });
  return (
    <Section title={words.edit} gap="xs">
      <TextInput label={words.name} value={name} onChange={(event) => setName(event.currentTarget.value)} error={issuesByField(save.error).name} />
      <SchemaFields schema={schema} omit={['name', 'comment']} value={fields} onChange={setFields} error={save.error} {...json} />
      <Textarea label={words.editComment} value={comment} onChange={(event) => setComment(event.currentTarget.value)} autosize minRows={1} />
      {save.error && <ProblemAlert error={save.error} />}
      <Group>
        <ActionButton action={save} disabled={!name.trim() || json.invalid}>
          {words.saveDraft}
        </ActionButton>
      </Group>
    </Section>
  );
}

function ContentList({ type }: { type: TypeKey }) {
  const { words, common, time } = useLocalised(WORDS);
  const session = useSession();
  const [siteId, setSiteId] = useSiteChoice();
  const [status, setStatus] = useState<(typeof STATUSES)[number] | ''>('');
  const list = usePagedList(
    ['content', type, siteId, status],
    async (cursor) => dataOr(await api.GET(collectionOf(type), { params: { query: { siteId, limit: 25, cursor, ...(status ? { status } : {}) } } })),
    siteId !== '',
  );
  return (
    <Stack>
      <Group align="end">
        <NativeSelect
          label={words.type}
          data={Object.keys(CONTENT_TYPES)}
          value={type}
          onChange={(event) => navigate(`/content/${event.currentTarget.value}`)}
        />
        <SitePicker siteId={siteId} onChange={setSiteId} />
        <NativeSelect
          label={common.status}
          data={[{ value: '', label: words.anyStatus }, ...STATUSES.map((value) => ({ value, label: value }))]}
          value={status}
          onChange={(event) => setStatus(event.currentTarget.value as typeof status)}
        />
      </Group>
      {siteId !== '' && <SiteLanguageSetting siteId={siteId} />}
      <PagedTable
        list={list}
        whenEmpty={common.none}
        label={`${words.heading}: ${type}`}
        striped
        rowKey={(item) => item.id}
        columns={[
          { header: words.name, cell: (item) => <Link to={`/content/${type}/${item.id}`}>{item.name}</Link> },
          { header: common.status, cell: (item) => <StatusBadge status={item.status} /> },
          { header: words.publishedRev, cell: (item) => item.publishedRev ?? '—' },
          { header: words.updated, cell: (item) => time(item.updatedAt) },
        ]}
      />
      <ReadOnlyNote show={!session.canEdit} />
      {session.canEdit && <NewDraft type={type} siteId={siteId} />}
    </Stack>
  );
}

function ContentItem({ type, id }: { type: TypeKey; id: string }) {
  const { words, common, time } = useLocalised(WORDS);
  const session = useSession();
  const queries = useQueryClient();
  const [viewing, setViewing] = useState<number | null>(null);
  const [comment, setComment] = useState('');
  const refresh = () => queries.invalidateQueries({ queryKey: ['content-item', type, id] });
  const entity = useQuery({
    queryKey: ['content-item', type, id],
    queryFn: async () => dataOr(await api.GET(itemPath(type), { params: { path: { id } } })),
    refetchInterval: 3000,
  });
  const history = usePagedList(['content-item', type, id, 'history'], async (cursor) =>
    dataOr(await api.GET(`${itemPath(type)}/history` as '/api/content/pages/{id}/history', { params: { path: { id }, query: { limit: 20, cursor } } })),
  );
  const atRevision = useQuery({
    queryKey: ['content-item', type, id, 'rev', viewing],
    enabled: viewing !== null,
    queryFn: async () =>
      dataOr(await api.GET(`${itemPath(type)}/history/{rev}` as '/api/content/pages/{id}/history/{rev}', { params: { path: { id, rev: viewing! } } })),
  });
  const restore = useMutation({
    mutationFn: async (rev: number) =>
      dataOr(await api.POST(`${itemPath(type)}/restore/{rev}` as '/api/content/pages/{id}/restore/{rev}', { params: { path: { id, rev } } })),
    onSuccess: refresh,
  });
  const publish = useMutation({
    mutationFn: async () =>
      dataOr(
        await api.POST(`${itemPath(type)}/publish` as '/api/content/pages/{id}/publish', {
          params: { path: { id } },
          body: comment.trim() ? { comment: comment.trim() } : {},
        }),
      ),
    onSuccess: refresh,
  });
  const archive = useMutation({
    mutationFn: async () => dataOr(await api.POST(`${itemPath(type)}/archive` as '/api/content/pages/{id}/archive', { params: { path: { id } }, body: {} })),
    onSuccess: refresh,
  });
  if (entity.error) return <ProblemAlert error={entity.error} />;
  if (!entity.data) return <Text>{common.loading}</Text>;
  const draft = entity.data as unknown as Record<string, unknown> & { name: string; status: string; siteId: string; publishedRev: number | null };
  return (
    <Stack>
      <Link to={`/content/${type}`}>{words.back}</Link>
      <Group justify="space-between">
        <Title order={2}>{draft.name}</Title>
        <Group>
          <Text size="sm">
            {common.site} {draft.siteId} · {words.publishedRev}: {draft.publishedRev ?? '—'}
          </Text>
          <StatusBadge status={draft.status} />
        </Group>
      </Group>
      <ReadOnlyNote show={!session.canEdit} />
      {session.canEdit && (
        <Paper withBorder p="sm">
          <Group align="end">
            <Textarea label={words.comment} value={comment} onChange={(event) => setComment(event.currentTarget.value)} autosize minRows={1} w={320} />
            <ActionButton action={publish}>{words.publish}</ActionButton>
            <ActionButton action={archive} variant="default">
              {words.archive}
            </ActionButton>
          </Group>
          {publish.data && (
            <Group mt="xs">
              <Text size="sm" data-testid="publish-outcome">
                {publish.data.status === 'PUBLISHED' ? `${words.published}: ${'publishedRev' in publish.data ? publish.data.publishedRev : ''}` : words.pending}
              </Text>
              <TemporalLink uiUrl={publish.data.uiUrl} />
            </Group>
          )}
          {publish.error && <ProblemAlert error={publish.error} />}
          {archive.error && <ProblemAlert error={archive.error} />}
          {restore.error && <ProblemAlert error={restore.error} />}
        </Paper>
      )}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Stack gap="xs">
          {session.canEdit ? (
            // Remounted on each new revision (a restore, a save elsewhere), so the form shows the draft as it is.
            <EditDraft key={String(draft.updatedAt)} type={type} draft={draft as typeof draft & { id: string }} onSaved={refresh} />
          ) : (
            <>
              <Title order={3}>{words.draft}</Title>
              <Code block dir="ltr">
                {JSON.stringify(ownFields(draft), null, 2)}
              </Code>
            </>
          )}
          {viewing !== null && atRevision.data && (
            <>
              <Title order={3}>
                {words.atRevision} {viewing}
              </Title>
              <Code block dir="ltr" data-testid="entity-at-revision">
                {JSON.stringify(ownFields(atRevision.data as unknown as Record<string, unknown>), null, 2)}
              </Code>
            </>
          )}
          {atRevision.error && <ProblemAlert error={atRevision.error} />}
        </Stack>
        <Stack gap="xs">
          <Title order={3}>{words.history}</Title>
          {history.error && <ProblemAlert error={history.error} />}
          <Timeline bulletSize={18} lineWidth={2} aria-label={words.history}>
            {history.items.map((item) => (
              <Timeline.Item key={item.rev} title={`${words.rev} ${item.rev} · ${item.status}`}>
                <Text size="sm">
                  {item.userName ?? item.userId ?? '—'} · {time(item.at)}
                </Text>
                {item.comment && (
                  <Text size="sm" fs="italic">
                    “{item.comment}”
                  </Text>
                )}
                <Group gap="xs" mt={4}>
                  <Button size="compact-xs" variant="light" onClick={() => setViewing(item.rev)} aria-label={`${words.view} ${words.rev} ${item.rev}`}>
                    {words.view}
                  </Button>
                  {session.canEdit && (
                    <Button
                      size="compact-xs"
                      variant="default"
                      onClick={() => restore.mutate(item.rev)}
                      aria-label={`${words.restore} ${words.rev} ${item.rev}`}
                    >
                      {words.restore}
                    </Button>
                  )}
                </Group>
              </Timeline.Item>
            ))}
          </Timeline>
          <MoreButton hasMore={history.hasMore} loading={history.loadingMore} onMore={history.loadMore} />
        </Stack>
      </SimpleGrid>
      {session.canEdit && (
        <ScheduleItem collection={CONTENT_TYPES[type]} id={id} siteId={draft.siteId} updatedAt={String(draft.updatedAt)} onScheduled={refresh} />
      )}
      <PublishedReads
        type={type}
        collection={CONTENT_TYPES[type]}
        siteId={draft.siteId}
        snapshot={draft.publishedSnapshot as Record<string, unknown> | null}
        publishedRev={draft.publishedRev}
      />
      <RevisionCompare
        collection={CONTENT_TYPES[type]}
        id={id}
        revisions={history.items.map((item) => item.rev)}
        canEdit={session.canEdit}
        onRestore={(rev) => restore.mutate(rev)}
      />
    </Stack>
  );
}

/** Content: each versioned type's items by site and status; an item's history, its revisions, restore, publish and archive. */
export function ContentScreen({ type, id }: { type?: string; id?: string }) {
  const words = useWords(WORDS);
  const chosen: TypeKey = isTypeKey(type) ? type : 'pages';
  return (
    <Stack>
      <Title order={2}>
        {words.heading} · {chosen}
      </Title>
      {id ? <ContentItem type={chosen} id={id} /> : <ContentList type={chosen} />}
    </Stack>
  );
}
