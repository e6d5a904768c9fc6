import { FormEvent, useState } from 'react';
import { Button, Group, Stack, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, dataOr, ProblemError } from '../api/client';
import type { paths } from '../api/schema';
import { fill, useLocalised } from '../i18n';
import { READABLE_DESCRIPTION, Section, StatusBadge } from '../ui/bits';
import { DataTable } from '../ui/DataTable';
import { ProblemAlert } from '../ui/ProblemAlert';

const WORDS = {
  en: {
    heading: 'Domains',
    hostname: 'Hostname',
    certificate: 'Certificate',
    expires: 'Expires',
    problem: 'Problem',
    PENDING: 'Pending',
    ISSUED: 'Issued',
    FAILED: 'Failed',
    uploaded: 'uploaded',
    remove: 'Remove',
    removeOne: 'Remove {hostname}',
    none: 'No hostnames yet: the service answers only on its path.',
    newHostname: 'Hostname to add',
    newHostnameHint: 'The edge sends every path of this name to the service; its certificate is asked for once it is added.',
    add: 'Add',
  },
  ar: {
    heading: 'النطاقات',
    hostname: 'اسم المضيف',
    certificate: 'الشهادة',
    expires: 'تنتهي في',
    problem: 'المشكلة',
    PENDING: 'قيد الانتظار',
    ISSUED: 'صادرة',
    FAILED: 'فشلت',
    uploaded: 'مرفوعة',
    remove: 'إزالة',
    removeOne: 'إزالة {hostname}',
    none: 'لا توجد أسماء مضيف بعد: لا تُخدم الخدمة إلا على مسارها.',
    newHostname: 'اسم المضيف المراد إضافته',
    newHostnameHint: 'توجّه البوابة كل مسارات هذا الاسم إلى الخدمة، وتُطلب شهادته بعد إضافته.',
    add: 'إضافة',
  },
};

type DomainsAnswer = paths['/api/infra/services/{name}/domains']['get']['responses'][200]['content']['application/json'];
/** `source` is optional here: the answers of an API without uploaded certificates do not carry it. */
type Domain = DomainsAnswer['domains'][number] & { source?: 'ACME' | 'UPLOADED' };

const queryKey = (name: string) => ['service-domains', name];

/**
 * Sets the service's whole list of hostnames (the API lets go of any name the list leaves out) and keeps
 * the answer as the list the section shows.
 */
function useSetDomains(name: string, onSaved?: () => void) {
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (domains: string[]) => dataOr(await api.PUT('/api/infra/services/{name}/domains', { params: { path: { name } }, body: { domains } })),
    onSuccess: (answer) => {
      queries.setQueryData(queryKey(name), answer);
      onSaved?.();
    },
  });
}

/**
 * A refusal split in two: the messages about the names go under the input, beside what was typed; the
 * title, code and detail above the form, without those messages a second time.
 */
function splitRefusal(error: unknown): { inline: string | undefined; alert: unknown } {
  if (!(error instanceof ProblemError) || !error.problem.errors?.length) return { inline: undefined, alert: error };
  return {
    inline: error.problem.errors.map((issue) => issue.message).join('; '),
    alert: new ProblemError({ ...error.problem, errors: undefined }),
  };
}

/** One hostname more: the current list with the typed name is sent; a refusal keeps what was typed, to be corrected. */
function AddDomain({ name, current }: { name: string; current: string[] }) {
  const { words } = useLocalised(WORDS);
  const [hostname, setHostname] = useState('');
  const add = useSetDomains(name, () => setHostname(''));
  const refusal = splitRefusal(add.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (hostname.trim() !== '') add.mutate([...current, hostname.trim()]);
  };
  return (
    <form onSubmit={submit}>
      <Stack gap="xs">
        <TextInput
          label={words.newHostname}
          description={words.newHostnameHint}
          descriptionProps={READABLE_DESCRIPTION}
          value={hostname}
          onChange={(event) => setHostname(event.currentTarget.value)}
          error={refusal.inline}
          dir="ltr"
          maw={480}
        />
        <Group>
          <Button type="submit" loading={add.isPending} disabled={hostname.trim() === ''}>
            {words.add}
          </Button>
        </Group>
        {refusal.alert !== null && <ProblemAlert error={refusal.alert} />}
      </Stack>
    </form>
  );
}

/**
 * The hostnames a deployed service answers on at the edge (`GET /api/infra/services/{name}/domains`), each
 * with its certificate's state, expiry and, when it failed, the ACME server's problem; a form adds one and
 * each row's Remove lets one go (both PUT the whole list).
 */
export function ServiceDomains({ name }: { name: string }) {
  const { words, common, time } = useLocalised(WORDS);
  const domains = useQuery({
    queryKey: queryKey(name),
    queryFn: async () => dataOr(await api.GET('/api/infra/services/{name}/domains', { params: { path: { name } } })),
    // A certificate is issued in the background: ask again while one is still waiting for it.
    refetchInterval: (query) => (query.state.data?.domains.some((domain) => domain.state === 'PENDING') ? 10000 : false),
  });
  const remove = useSetDomains(name);
  const hostnames = domains.data?.domains.map((domain) => domain.hostname) ?? [];
  // The list being sent is the one without the name being removed: that row's button is the busy one.
  const removing = (hostname: string) => remove.isPending && remove.variables?.includes(hostname) === false;
  return (
    <Section title={words.heading} gap="xs" onRefresh={() => void domains.refetch()}>
      {domains.error && <ProblemAlert error={domains.error} />}
      {!domains.data && !domains.error && <Text c="gray.7">{common.loading}</Text>}
      {domains.data && (
        <>
          <DataTable<Domain>
            label={words.heading}
            rows={domains.data.domains}
            rowKey={(domain) => domain.hostname}
            columns={[
              { header: words.hostname, cell: (domain) => domain.hostname, ltr: true },
              {
                header: words.certificate,
                cell: (domain) => (
                  <>
                    <StatusBadge status={domain.state} label={words[domain.state]} />
                    {/* An organisation's own certificate is renewed by whoever uploaded it, not by ACME: say which it is. */}
                    {domain.source === 'UPLOADED' && ` (${words.uploaded})`}
                  </>
                ),
              },
              { header: words.expires, cell: (domain) => (domain.notAfter ? <time dateTime={domain.notAfter}>{time(domain.notAfter)}</time> : '—') },
              { header: words.problem, cell: (domain) => (domain.state === 'FAILED' ? (domain.problem ?? '—') : '—') },
              {
                header: '',
                label: words.remove,
                cell: (domain) => (
                  <Button
                    size="xs"
                    variant="light"
                    color="red"
                    aria-label={fill(words.removeOne, { hostname: domain.hostname })}
                    loading={removing(domain.hostname)}
                    disabled={remove.isPending}
                    onClick={() => remove.mutate(hostnames.filter((hostname) => hostname !== domain.hostname))}
                  >
                    {words.remove}
                  </Button>
                ),
              },
            ]}
          />
          {domains.data.domains.length === 0 && <Text>{words.none}</Text>}
          {remove.error && <ProblemAlert error={remove.error} />}
          <AddDomain name={name} current={hostnames} />
        </>
      )}
    </Section>
  );
}
