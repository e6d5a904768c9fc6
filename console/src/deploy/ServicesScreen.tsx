import { Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, dataOr } from '../api/client';
import { COMMON, useWords } from '../i18n';
import { Link } from '../router';
import { Loading, StatusBadge } from '../ui/bits';
import { ProblemAlert } from '../ui/ProblemAlert';

const WORDS = {
  en: { heading: 'Services', group: 'Dashboard Group', name: 'Name', kind: 'Kind', instances: 'Instances', image: 'Image', noServices: 'No services.', core: 'core' },
  ar: { heading: 'الخدمات', group: 'مجموعة لوحة التحكم', name: 'الاسم', kind: 'النوع', instances: 'النسخ', image: 'الصورة', noServices: 'لا توجد خدمات.', core: 'أساسية' },
};

/** Infrastructure → Services: every service, core and deployed, grouped by Dashboard Group. */
export function ServicesScreen() {
  const words = useWords(WORDS);
  const common = useWords(COMMON);
  const services = useQuery({ queryKey: ['services'], queryFn: async () => dataOr(await api.GET('/api/infra/services', { params: { query: { limit: 500 } } })), refetchInterval: 5000 });
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
          <Table aria-label={`${words.heading}: ${group}`} striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{words.name}</Table.Th>
                <Table.Th>{common.status}</Table.Th>
                <Table.Th>{words.instances}</Table.Th>
                <Table.Th>{words.kind}</Table.Th>
                <Table.Th>{words.image}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {items.map((service) => (
                <Table.Tr key={service.name}>
                  <Table.Td>
                    <Link to={`/services/${encodeURIComponent(service.name)}`}>{service.name}</Link>
                  </Table.Td>
                  <Table.Td>
                    <StatusBadge status={service.status} />
                  </Table.Td>
                  <Table.Td>
                    {service.runningInstances} / {service.desiredInstances}
                  </Table.Td>
                  <Table.Td>{service.dynamic ? service.kind : words.core}</Table.Td>
                  <Table.Td>{service.image ?? '—'}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Stack>
      ))}
      {services.data?.items.length === 0 && <Text>{words.noServices}</Text>}
    </Stack>
  );
}
