import { useState } from 'react';
import { Alert, Badge, Button, Group, List, NativeSelect, Paper, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, dataOr, ProblemError, usePagedList } from '../api/client';
import { fill, useLocalised, useWords } from '../i18n';
import { Link, navigate } from '../router';
import { useSession } from '../session';
import { ActionButton, ReadOnlyNote, Section, SitePicker, StatusBadge, TemporalLink, useSiteChoice } from '../ui/bits';
import { PagedTable } from '../ui/DataTable';
import { ProblemAlert } from '../ui/ProblemAlert';

const WORDS = {
  en: {
    heading: 'Releases',
    name: 'Name',
    items: 'Items',
    publishAt: 'Publishes at',
    updated: 'Updated',
    newRelease: 'New release',
    create: 'Create the release',
    back: 'Back to the releases',
    version: 'Version',
    type: 'Type',
    item: 'Item',
    revision: 'Revision',
    revisionHint: 'Revision (the latest when empty)',
    now: 'Now',
    add: 'Add to the release',
    remove: 'Remove {name}',
    removeShort: 'Remove',
    gone: '(deleted)',
    publish: 'Publish the release',
    comment: 'Comment for the approvers',
    scheduleAt: 'Publish the release at',
    schedule: 'Schedule the release',
    cancel: 'Cancel the schedule',
    timeZone: 'Times are in {zone}',
    failed: 'Nothing of the release was published',
    published: 'Published, every item',
    pending: 'Waiting for approval, as a whole',
    scheduled: 'Scheduled',
    empty: 'The release holds no item yet.',
  },
  ar: {
    heading: 'الإصدارات',
    name: 'الاسم',
    items: 'العناصر',
    publishAt: 'يُنشر في',
    updated: 'آخر تحديث',
    newRelease: 'إصدار جديد',
    create: 'أنشئ الإصدار',
    back: 'عودة إلى الإصدارات',
    version: 'النسخة',
    type: 'النوع',
    item: 'العنصر',
    revision: 'المراجعة',
    revisionHint: 'المراجعة (الأحدث إن تُركت فارغة)',
    now: 'الآن',
    add: 'أضف إلى الإصدار',
    remove: 'أزل {name}',
    removeShort: 'أزل',
    gone: '(محذوف)',
    publish: 'انشر الإصدار',
    comment: 'تعليق للمعتمدين',
    scheduleAt: 'انشر الإصدار في',
    schedule: 'جدول الإصدار',
    cancel: 'ألغِ الجدولة',
    timeZone: 'الأوقات بتوقيت {zone}',
    failed: 'لم يُنشر شيء من الإصدار',
    published: 'نُشر، كل العناصر',
    pending: 'بانتظار الموافقة، ككل',
    scheduled: 'مجدول',
    empty: 'لا يحوي الإصدار أي عنصر بعد.',
  },
};

const RELEASE = '/api/content/releases/{id}' as const;

function ReleaseList() {
  const { words, common, time } = useLocalised(WORDS);
  const session = useSession();
  const [siteId, setSiteId] = useSiteChoice();
  const [name, setName] = useState('');
  const list = usePagedList(
    ['releases', siteId],
    async (cursor) => dataOr(await api.GET('/api/content/releases', { params: { query: { siteId, limit: 25, cursor } } })),
    siteId !== '',
  );
  const create = useMutation({
    mutationFn: async () => dataOr(await api.POST('/api/content/releases', { body: { name: name.trim(), siteId } })),
    onSuccess: (created) => navigate(`/releases/${created.id}`),
  });
  return (
    <Stack>
      <SitePicker siteId={siteId} onChange={setSiteId} />
      <PagedTable
        list={list}
        whenEmpty={common.none}
        label={words.heading}
        striped
        rowKey={(release) => release.id}
        columns={[
          { header: words.name, cell: (release) => <Link to={`/releases/${release.id}`}>{release.name}</Link> },
          { header: common.status, cell: (release) => <StatusBadge status={release.status} /> },
          { header: words.items, cell: (release) => release.itemCount },
          { header: words.publishAt, cell: (release) => (release.publishAt ? time(release.publishAt) : '—') },
          { header: words.updated, cell: (release) => time(release.updatedAt) },
        ]}
      />
      <ReadOnlyNote show={!session.canEdit} />
      {session.canEdit && (
        <Section title={words.newRelease} gap="xs">
          <TextInput label={words.name} value={name} onChange={(event) => setName(event.currentTarget.value)} />
          {create.error && <ProblemAlert error={create.error} />}
          <Group>
            <ActionButton action={create} disabled={!siteId || !name.trim()}>
              {words.create}
            </ActionButton>
          </Group>
        </Section>
      )}
    </Stack>
  );
}

/** Picks an item of a type in the release's site, from the type's own collection. */
function AddItem({ releaseId, siteId, onAdded }: { releaseId: string; siteId: string; onAdded: () => void }) {
  const words = useWords(WORDS);
  const types = useQuery({
    queryKey: ['release-item-types'],
    staleTime: Infinity,
    queryFn: async () => dataOr(await api.GET('/api/content/releases/item-types')),
  });
  const [type, setType] = useState('PAGE');
  const [itemId, setItemId] = useState('');
  const [revision, setRevision] = useState('');
  const collection = types.data?.items.find((candidate) => candidate.type === type)?.collection;
  const candidates = useQuery({
    queryKey: ['release-candidates', collection, siteId],
    enabled: collection !== undefined,
    queryFn: async () => {
      const answer = await api.GET(collection as '/api/content/pages', { params: { query: { siteId, limit: 100 } } });
      return dataOr(answer).items as Array<{ id: string; name: string; status: string }>;
    },
  });
  const add = useMutation({
    mutationFn: async () =>
      dataOr(
        await api.POST('/api/content/releases/{id}/items', {
          params: { path: { id: releaseId } },
          body: { type: type as 'PAGE', id: itemId, ...(revision ? { revision: Number(revision) } : {}) },
        }),
      ),
    onSuccess: () => {
      setItemId('');
      setRevision('');
      onAdded();
    },
  });
  return (
    <Group align="end">
      <NativeSelect
        label={words.type}
        data={(types.data?.items ?? []).map((candidate) => candidate.type)}
        value={type}
        onChange={(event) => {
          setType(event.currentTarget.value);
          setItemId('');
        }}
      />
      <NativeSelect
        label={words.item}
        data={[{ value: '', label: '—' }, ...(candidates.data ?? []).map((item) => ({ value: item.id, label: `${item.name} (${item.status})` }))]}
        value={itemId}
        onChange={(event) => setItemId(event.currentTarget.value)}
      />
      <TextInput label={words.revisionHint} type="number" min={1} value={revision} onChange={(event) => setRevision(event.currentTarget.value)} w={220} />
      <ActionButton action={add} disabled={!itemId}>
        {words.add}
      </ActionButton>
      {add.error && <ProblemAlert error={add.error} />}
    </Group>
  );
}

/** A datetime-local value (the browser's zone) as an ISO instant. */
const instantOf = (local: string) => new Date(local).toISOString();

function ReleaseItem({ id }: { id: string }) {
  const { words, common, time } = useLocalised(WORDS);
  const session = useSession();
  const queries = useQueryClient();
  const [comment, setComment] = useState('');
  const [at, setAt] = useState('');
  const refresh = () => queries.invalidateQueries({ queryKey: ['release', id] });
  const release = useQuery({
    queryKey: ['release', id],
    queryFn: async () => dataOr(await api.GET(RELEASE, { params: { path: { id } } })),
    refetchInterval: 2000,
  });
  const remove = useMutation({
    mutationFn: async (itemId: string) => dataOr(await api.DELETE('/api/content/releases/{id}/items/{itemId}', { params: { path: { id, itemId } } })),
    onSuccess: refresh,
  });
  const publish = useMutation({
    mutationFn: async () =>
      dataOr(await api.POST('/api/content/releases/{id}/publish', { params: { path: { id } }, body: comment.trim() ? { comment: comment.trim() } : {} })),
    onSettled: refresh,
  });
  const schedule = useMutation({
    mutationFn: async () => dataOr(await api.POST('/api/content/releases/{id}/schedule', { params: { path: { id } }, body: { at: instantOf(at) } })),
    onSettled: refresh,
  });
  const cancel = useMutation({
    mutationFn: async () => dataOr(await api.POST('/api/content/releases/{id}/cancel', { params: { path: { id } } })),
    onSettled: refresh,
  });
  if (release.error) return <ProblemAlert error={release.error} />;
  if (!release.data) return <Text>{common.loading}</Text>;
  const current = release.data;
  const editable = session.canEdit && (current.status === 'OPEN' || current.status === 'FAILED' || current.status === 'REJECTED');
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  // The publish answer's refusal is already on the release (its failure): shown once, from there.
  const refusal = publish.error instanceof ProblemError && publish.error.problem.code === 'RELEASE_FAILED' ? null : publish.error;
  return (
    <Stack>
      <Link to="/releases">{words.back}</Link>
      <Group justify="space-between">
        <Title order={2}>{current.name}</Title>
        <Group>
          <Text size="sm">
            {common.site} {current.siteId} · {words.version} {current.version}
            {current.publishAt ? ` · ${words.publishAt} ${time(current.publishAt)}` : ''}
          </Text>
          <StatusBadge status={current.status} />
        </Group>
      </Group>
      {current.failure && current.status === 'FAILED' && (
        <Alert color="red" variant="light" title={words.failed} data-testid="release-failure">
          <List size="sm">
            {current.failure.map((failure) => (
              <List.Item key={`${failure.itemId ?? 'release'}-${failure.reason}`}>
                <Badge variant="light" c="black" color="red" mr="xs">
                  {failure.reason}
                </Badge>
                {failure.message}
              </List.Item>
            ))}
          </List>
        </Alert>
      )}
      <Paper withBorder p="sm">
        <Table aria-label={words.items} striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{words.type}</Table.Th>
              <Table.Th>{words.item}</Table.Th>
              <Table.Th>{words.revision}</Table.Th>
              <Table.Th>{common.status}</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {current.items.map((item) => (
              <Table.Tr key={item.id}>
                <Table.Td>{item.type}</Table.Td>
                <Table.Td>{item.name ?? words.gone}</Table.Td>
                <Table.Td>{item.revision}</Table.Td>
                <Table.Td>{item.componentStatus ? <StatusBadge status={item.componentStatus} /> : '—'}</Table.Td>
                <Table.Td>
                  {editable && (
                    <Button
                      size="compact-xs"
                      variant="default"
                      onClick={() => remove.mutate(item.id)}
                      aria-label={fill(words.remove, { name: item.name ?? item.componentId })}
                    >
                      {words.removeShort}
                    </Button>
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
        {current.items.length === 0 && <Text size="sm">{words.empty}</Text>}
        {remove.error && <ProblemAlert error={remove.error} />}
      </Paper>
      <ReadOnlyNote show={!session.canEdit} />
      {editable && <AddItem releaseId={id} siteId={current.siteId} onAdded={refresh} />}
      {session.canEdit && current.status !== 'PUBLISHED' && (
        <Paper withBorder p="sm">
          <Stack gap="xs">
            <Group align="end">
              <TextInput label={words.comment} value={comment} onChange={(event) => setComment(event.currentTarget.value)} w={320} />
              <ActionButton action={publish} disabled={!editable || current.items.length === 0}>
                {words.publish}
              </ActionButton>
            </Group>
            <Text size="sm" data-testid="release-time-zone">
              {fill(words.timeZone, { zone })}
            </Text>
            <Group align="end">
              <TextInput label={words.scheduleAt} type="datetime-local" step={1} value={at} onChange={(event) => setAt(event.currentTarget.value)} />
              <ActionButton action={schedule} disabled={!editable || !at || current.items.length === 0}>
                {words.schedule}
              </ActionButton>
              {current.status === 'SCHEDULED' && (
                <ActionButton action={cancel} variant="default">
                  {words.cancel}
                </ActionButton>
              )}
            </Group>
            {publish.data && (
              <Group>
                <Text size="sm" data-testid="release-outcome">
                  {publish.data.status === 'PUBLISHED' ? words.published : words.pending}
                </Text>
                <TemporalLink uiUrl={publish.data.uiUrl} />
              </Group>
            )}
            {refusal && <ProblemAlert error={refusal} />}
            {schedule.error && <ProblemAlert error={schedule.error} />}
            {cancel.error && <ProblemAlert error={cancel.error} />}
          </Stack>
        </Paper>
      )}
    </Stack>
  );
}

/** Releases: named sets of items published together, now, at a time, or through one approval. */
export function ReleasesScreen({ id }: { id?: string }) {
  const words = useWords(WORDS);
  return (
    <Stack>
      <Title order={2}>{words.heading}</Title>
      {id ? <ReleaseItem id={id} /> : <ReleaseList />}
    </Stack>
  );
}
