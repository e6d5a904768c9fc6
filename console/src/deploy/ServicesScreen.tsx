import { Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, dataOr } from '../api/client';
import { useLocalised } from '../i18n';
import { Link } from '../router';
import { Loading, StatusBadge } from '../ui/bits';
import { DataTable } from '../ui/DataTable';
import { ProblemAlert } from '../ui/ProblemAlert';

const WORDS = {
  en: {
    heading: 'Services',
    group: 'Dashboard Group',
    name: 'Name',
    kind: 'Kind',
    instances: 'Instances',
    image: 'Image',
    noServices: 'No services.',
    core: 'core',
  },
  ar: {
    heading: 'الخدمات',
    group: 'مجموعة لوحة التحكم',
    name: 'الاسم',
    kind: 'النوع',
    instances: 'النسخ',
    image: 'الصورة',
    noServices: 'لا توجد خدمات.',
    core: 'أساسية',
  },
};

/** Infrastructure → Services: every service, core and deployed, grouped by Dashboard Group. */
export function ServicesScreen() {
  const { words, common } = useLocalised(WORDS);
  const services = useQuery({
    queryKey: ['services'],
    queryFn: async () => dataOr(await api.GET('/api/infra/services', { params: { query: { limit: 500 } } })),
    refetchInterval: 5000,
  });
  const groups = new Map<string, NonNullable<typeof services.data>['items']>();
  for (const service of services.data?.items ?? []) groups.set(service.group, [...(groups.get(service.group) ?? []), service]);
  return (
    <Stack>
      <Title order={2}>{words.heading}</Title>
      {services.error && <ProblemAlert error={services.error} />}
      {services.isLoading && <Loading />}
      {[...groups].map(([group, items]) => (
        <Stack key={group} gap="xs">
          <Title order={3}>
            {words.group}: {group}
          </Title>
          <DataTable
            label={`${words.heading}: ${group}`}
            striped
            rows={items}
            rowKey={(service) => service.name}
            columns={[
              { header: words.name, cell: (service) => <Link to={`/services/${encodeURIComponent(service.name)}`}>{service.name}</Link> },
              { header: common.status, cell: (service) => <StatusBadge status={service.status} /> },
              { header: words.instances, cell: (service) => `${service.runningInstances} / ${service.desiredInstances}` },
              { header: words.kind, cell: (service) => (service.dynamic ? service.kind : words.core) },
              { header: words.image, cell: (service) => service.image ?? '—' },
            ]}
          />
        </Stack>
      ))}
      {services.data?.items.length === 0 && <Text>{words.noServices}</Text>}
    </Stack>
  );
}
