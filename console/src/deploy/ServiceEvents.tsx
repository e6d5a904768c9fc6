import { Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, dataOr } from '../api/client';
import type { paths } from '../api/schema';
import { useLanguage, useWords } from '../i18n';
import { Section, StatusBadge } from '../ui/bits';
import { DataTable } from '../ui/DataTable';
import { ProblemAlert } from '../ui/ProblemAlert';

const WORDS = {
  en: {
    heading: 'Events',
    time: 'Time',
    kind: 'Event',
    instance: 'Instance',
    detail: 'Detail',
    none: 'No events yet.',
  },
  ar: {
    heading: 'الأحداث',
    time: 'الوقت',
    kind: 'الحدث',
    instance: 'النسخة',
    detail: 'التفاصيل',
    none: 'لا توجد أحداث بعد.',
  },
};

type ServiceEvent = paths['/api/infra/services/{name}/events']['get']['responses'][200]['content']['application/json']['items'][number];

/** A time in the browser's time zone, with the zone named: what happened overnight is often read from elsewhere. */
function useZonedTime(): (iso: string) => string {
  const language = useLanguage();
  return (iso) => new Date(iso).toLocaleString(language === 'ar' ? 'ar' : 'en-GB', { dateStyle: 'medium', timeStyle: 'long' });
}

/** What became of a service's instances, newest first (`GET /api/infra/services/{name}/events`), asked for again every 5 s. */
export function ServiceEvents({ name }: { name: string }) {
  const words = useWords(WORDS);
  const zoned = useZonedTime();
  const events = useQuery({
    queryKey: ['service-events', name],
    queryFn: async () => dataOr(await api.GET('/api/infra/services/{name}/events', { params: { path: { name }, query: { limit: 100 } } })).items,
    refetchInterval: 5000,
  });
  return (
    <Section title={words.heading} gap="xs">
      {events.error && <ProblemAlert error={events.error} />}
      <DataTable
        label={words.heading}
        rows={events.data ?? []}
        rowKey={(event: ServiceEvent) => `${event.at}|${event.kind}|${event.instanceId ?? ''}|${event.detail}`}
        columns={[
          { header: words.time, cell: (event) => <time dateTime={event.at}>{zoned(event.at)}</time> },
          { header: words.kind, cell: (event) => <StatusBadge status={event.kind} /> },
          { header: words.instance, cell: (event) => (event.instanceId ? event.instanceId.slice(0, 8) : '—'), ltr: true },
          { header: words.detail, cell: (event) => event.detail },
        ]}
      />
      {events.data?.length === 0 && <Text>{words.none}</Text>}
    </Section>
  );
}
