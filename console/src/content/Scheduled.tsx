import { useEffect, useState } from 'react';
import { Button, Group, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, dataOr, usePagedList } from '../api/client';
import { useLocalised, useWords } from '../i18n';
import { ActionButton, Section, SitePicker, useSiteChoice } from '../ui/bits';
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

/** The browser's time zone: the one `datetime-local` inputs are read in, and times are shown in. */
const TIME_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** What is scheduled in a site (or for one item of it), each with its cancel button where the API says the caller may cancel it. */
function ScheduledList({ siteId, itemId, label }: { siteId: string; itemId?: string; label: string }) {
  const { words, time } = useLocalised(WORDS);
  const queries = useQueryClient();
  const list = usePagedList(
    ['scheduled', siteId, itemId],
    async (cursor) => dataOr(await api.GET('/api/workflow/scheduled', { params: { query: { siteId, ...(itemId ? { id: itemId } : {}), limit: 50, cursor } } })),
    siteId !== '',
  );
  const cancel = useMutation({
    mutationFn: async (change: (typeof list.items)[number]) =>
      dataOr(
        await api.DELETE(`${change.collection}/{id}/schedule` as '/api/content/pages/{id}/schedule', {
          params: { path: { id: change.id } },
        }),
      ),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['scheduled'] }),
  });
  return (
    <>
      {cancel.error && <ProblemAlert error={cancel.error} />}
      <PagedTable
        list={list}
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
              change.canCancel && change.collection ? (
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

/** One change an item can be given a time for: a publish (`publishAt`) or an archive (`archiveAt`), and its words. */
const SCHEDULABLE = {
  publish: { field: 'publishAt', label: 'publishAt', button: 'schedulePublish' },
  archive: { field: 'archiveAt', label: 'archiveAt', button: 'scheduleArchive' },
} as const;

/** A time in the browser's zone and the button that asks for the change then; the API's refusal shows below it. */
function ScheduleAt(props: { collection: string; id: string; change: keyof typeof SCHEDULABLE; onScheduled: () => void }) {
  const words = useWords(WORDS);
  const { field, label, button } = SCHEDULABLE[props.change];
  const [at, setAt] = useState('');
  const schedule = useMutation({
    mutationFn: async () =>
      dataOr(
        await api.POST(`${props.collection}/{id}/${props.change}` as '/api/content/pages/{id}/publish', {
          params: { path: { id: props.id } },
          // A value that is not a time goes as typed: the API's 400 says why.
          body: { [field]: instantOf(at) ?? at },
        }),
      ),
    onSuccess: props.onScheduled,
  });
  return (
    <Stack gap={4}>
      <Group align="end">
        <TextInput type="datetime-local" step={1} label={words[label]} value={at} onChange={(event) => setAt(event.currentTarget.value)} />
        <ActionButton action={schedule} variant="light" disabled={at === ''}>
          {words[button]}
        </ActionButton>
      </Group>
      {schedule.error && <ProblemAlert error={schedule.error} />}
    </Stack>
  );
}

/** On an item: publish at and unpublish at, in the browser's time zone (shown), and what is scheduled for it (asked again whenever the item changes). */
export function ScheduleItem(props: { collection: string; id: string; siteId: string; updatedAt: string; onScheduled: () => void }) {
  const words = useWords(WORDS);
  const queries = useQueryClient();
  // The item changed (a scheduled change happened, say): what is still scheduled is asked again.
  useEffect(() => void queries.invalidateQueries({ queryKey: ['scheduled'] }), [queries, props.updatedAt]);
  const scheduled = () => {
    void queries.invalidateQueries({ queryKey: ['scheduled'] });
    props.onScheduled();
  };
  return (
    <Section title={words.schedule} gap="xs">
      <Text size="sm" data-testid="time-zone">
        {words.timeZone} {TIME_ZONE}
      </Text>
      <Group align="start">
        <ScheduleAt collection={props.collection} id={props.id} change="publish" onScheduled={scheduled} />
        <ScheduleAt collection={props.collection} id={props.id} change="archive" onScheduled={scheduled} />
      </Group>
      <ScheduledList siteId={props.siteId} itemId={props.id} label={words.onItem} />
    </Section>
  );
}

/** Scheduled: a site's publishes and archives still to come, soonest first, each cancellable by an editor. */
export function ScheduledScreen() {
  const words = useWords(WORDS);
  const [siteId, setSiteId] = useSiteChoice();
  return (
    <Stack>
      <Title order={2}>{words.heading}</Title>
      <SitePicker siteId={siteId} onChange={setSiteId} />
      <ScheduledList siteId={siteId.trim()} label={words.heading} />
    </Stack>
  );
}
