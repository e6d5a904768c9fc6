import { useEffect, useState } from 'react';
import { Button, Group, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, dataOr, usePagedList } from '../api/client';
import { useLocalised, useWords } from '../i18n';
import { useSession } from '../session';
import { ActionButton, Section, SitePicker } from '../ui/bits';
import { PagedTable } from '../ui/DataTable';
import { ProblemAlert } from '../ui/ProblemAlert';

const WORDS = {
  en: {
    heading: 'Scheduled',
    schedule: 'Schedule',
    publishAt: 'Publish at',
    archiveAt: 'Unpublish (archive) at',
    schedulePublish: 'Schedule the publish',
    scheduleArchive: 'Schedule the archive',
    timeZone: 'Times are in',
    item: 'Item',
    action: 'Change',
    due: 'Due',
    revision: 'Revision',
    requestedBy: 'Asked by',
    cancel: 'Cancel',
    onItem: 'Scheduled for this item',
    none: 'Nothing is scheduled.',
  },
  ar: {
    heading: 'المجدول',
    schedule: 'جدولة',
    publishAt: 'انشر في',
    archiveAt: 'ألغِ النشر (أرشف) في',
    schedulePublish: 'جدول النشر',
    scheduleArchive: 'جدول الأرشفة',
    timeZone: 'الأوقات بتوقيت',
    item: 'العنصر',
    action: 'التغيير',
    due: 'الموعد',
    revision: 'المراجعة',
    requestedBy: 'طلبه',
    cancel: 'ألغِ',
    onItem: 'المجدول لهذا العنصر',
    none: 'لا شيء مجدول.',
  },
};

/** The collection of each versioned type whose changes can be scheduled and cancelled from the console. */
const COLLECTIONS: Record<string, string> = {
  PAGE: '/api/content/pages',
  PAGE_LAYOUT: '/api/content/page-layouts',
  PORTLET: '/api/content/portlets',
  WEB_CONTENT: '/api/content/web-content',
  NAVIGATION: '/api/content/navigation',
  DYNAMIC_FORM: '/api/forms',
  EMAIL_TEMPLATE: '/api/email/templates',
};

/** The browser's time zone: the one `datetime-local` inputs are read in, and times are shown in. */
const TIME_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

type ScheduledChange = { componentType: string; id: string; siteId: string; action: string; revision: number | null; dueAt: string; requestedBy: string };

/** What is scheduled in a site (or for one item of it), each with its cancel button for an editor. */
function ScheduledList({ siteId, itemId, label }: { siteId: string; itemId?: string; label: string }) {
  const { words, time } = useLocalised(WORDS);
  const session = useSession();
  const queries = useQueryClient();
  const list = usePagedList(
    ['scheduled', siteId],
    async (cursor) => dataOr(await api.GET('/api/workflow/scheduled', { params: { query: { siteId, limit: 50, cursor } } })),
    siteId !== '',
  );
  const cancel = useMutation({
    mutationFn: async (change: ScheduledChange) =>
      dataOr(
        await api.DELETE(`${COLLECTIONS[change.componentType]}/{id}/schedule` as '/api/content/pages/{id}/schedule', {
          params: { path: { id: change.id } },
        }),
      ),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['scheduled'] }),
  });
  const shown = itemId ? { ...list, items: list.items.filter((change) => change.id === itemId) } : list;
  return (
    <>
      {cancel.error && <ProblemAlert error={cancel.error} />}
      <PagedTable
        list={shown}
        label={label}
        whenEmpty={words.none}
        rowKey={(change) => `${change.componentType}:${change.id}:${change.dueAt}`}
        columns={[
          { header: words.item, cell: (change) => `${change.componentType} ${change.id.slice(0, 8)}`, ltr: true },
          { header: words.action, cell: (change) => change.action },
          { header: `${words.due} (${TIME_ZONE})`, cell: (change) => time(change.dueAt) },
          { header: words.revision, cell: (change) => change.revision ?? '—' },
          { header: words.requestedBy, cell: (change) => change.requestedBy },
          {
            header: '',
            label: words.cancel,
            cell: (change) =>
              session.canEdit && COLLECTIONS[change.componentType] ? (
                <Button
                  size="xs"
                  variant="default"
                  onClick={() => cancel.mutate(change)}
                  aria-label={`${words.cancel} ${change.action} ${change.id.slice(0, 8)}`}
                >
                  {words.cancel}
                </Button>
              ) : null,
          },
        ]}
      />
    </>
  );
}

/** An instant from a `datetime-local` value, read in the browser's time zone; null while it is not one. */
const instantOf = (local: string): string | null => (local && !Number.isNaN(Date.parse(local)) ? new Date(local).toISOString() : null);

/** On an item: publish at and unpublish at, in the browser's time zone (shown), and what is scheduled for it (asked again whenever the item changes). */
export function ScheduleItem(props: { collection: string; id: string; siteId: string; updatedAt: string; onScheduled: () => void }) {
  const { collection, id, siteId, onScheduled } = props;
  const words = useWords(WORDS);
  const queries = useQueryClient();
  // The item changed (a scheduled change happened, say): what is still scheduled is asked again.
  useEffect(() => void queries.invalidateQueries({ queryKey: ['scheduled'] }), [queries, props.updatedAt]);
  const [publishAt, setPublishAt] = useState('');
  const [archiveAt, setArchiveAt] = useState('');
  const done = () => {
    void queries.invalidateQueries({ queryKey: ['scheduled'] });
    onScheduled();
  };
  const publish = useMutation({
    mutationFn: async () =>
      dataOr(
        await api.POST(`${collection}/{id}/publish` as '/api/content/pages/{id}/publish', {
          params: { path: { id } },
          body: { publishAt: instantOf(publishAt) ?? publishAt },
        }),
      ),
    onSuccess: done,
  });
  const archive = useMutation({
    mutationFn: async () =>
      dataOr(
        await api.POST(`${collection}/{id}/archive` as '/api/content/pages/{id}/archive', {
          params: { path: { id } },
          body: { archiveAt: instantOf(archiveAt) ?? archiveAt },
        }),
      ),
    onSuccess: done,
  });
  return (
    <Section title={words.schedule} gap="xs">
      <Text size="sm" data-testid="time-zone">
        {words.timeZone} {TIME_ZONE}
      </Text>
      <Group align="end">
        <TextInput type="datetime-local" step={1} label={words.publishAt} value={publishAt} onChange={(event) => setPublishAt(event.currentTarget.value)} />
        <ActionButton action={publish} variant="light" disabled={publishAt === ''}>
          {words.schedulePublish}
        </ActionButton>
        <TextInput type="datetime-local" step={1} label={words.archiveAt} value={archiveAt} onChange={(event) => setArchiveAt(event.currentTarget.value)} />
        <ActionButton action={archive} variant="light" disabled={archiveAt === ''}>
          {words.scheduleArchive}
        </ActionButton>
      </Group>
      {publish.error && <ProblemAlert error={publish.error} />}
      {archive.error && <ProblemAlert error={archive.error} />}
      <ScheduledList siteId={siteId} itemId={id} label={words.onItem} />
    </Section>
  );
}

/** Scheduled: a site's publishes and archives still to come, soonest first, each cancellable by an editor. */
export function ScheduledScreen() {
  const words = useWords(WORDS);
  const session = useSession();
  const [siteId, setSiteId] = useState(session.sites[0] ?? '');
  return (
    <Stack>
      <Title order={2}>{words.heading}</Title>
      <SitePicker siteId={siteId} onChange={setSiteId} />
      <ScheduledList siteId={siteId.trim()} label={words.heading} />
    </Stack>
  );
}
