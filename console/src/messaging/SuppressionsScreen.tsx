import { useState } from 'react';
import { Button, Checkbox, Group, Stack, Text, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { api, dataOr, usePagedList } from '../api/client';
import { fill, useLocalised, useWords } from '../i18n';
import { SitePicker, useSiteChoice } from '../ui/bits';
import { PagedTable } from '../ui/DataTable';
import { ProblemAlert } from '../ui/ProblemAlert';

const WORDS = {
  en: {
    heading: 'Suppression list',
    explain: "Addresses a hard bounce or a complaint took out of the site's sends: nothing is sent to them until their entry is lifted.",
    showLifted: 'Show lifted entries too',
    address: 'Address',
    reason: 'Reason',
    'hard-bounce': 'Hard bounce',
    complaint: 'Complaint',
    detail: 'Detail',
    lifted: 'Lifted',
    liftedBy: '{when}, by {who}',
    lift: 'Lift',
    liftOf: 'Lift {address}',
    empty: 'No address is suppressed in this site.',
  },
  ar: {
    heading: 'قائمة العناوين الموقوفة',
    explain: 'عناوين أوقف ارتدادٌ دائم أو شكوى الإرسالَ إليها في هذا الموقع: لا يُرسل إليها شيء حتى يُرفع إيقافها.',
    showLifted: 'اعرض الإيقافات المرفوعة أيضًا',
    address: 'العنوان',
    reason: 'السبب',
    'hard-bounce': 'ارتداد دائم',
    complaint: 'شكوى',
    detail: 'التفاصيل',
    lifted: 'رُفع',
    liftedBy: '{when}، بيد {who}',
    lift: 'ارفع',
    liftOf: 'ارفع {address}',
    empty: 'لا عنوان موقوف في هذا الموقع.',
  },
};

function SuppressionList({ siteId, showLifted }: { siteId: string; showLifted: boolean }) {
  const { words, common, time } = useLocalised(WORDS);
  const list = usePagedList(['suppressions', siteId, showLifted], async (cursor) =>
    dataOr(await api.GET('/api/email/suppressions', { params: { query: { siteId, lifted: showLifted ? 'true' : 'false', limit: 25, cursor } } })),
  );
  const lift = useMutation({
    mutationFn: async (id: string) => dataOr(await api.DELETE('/api/email/suppressions/{id}', { params: { path: { id } } })),
    onSuccess: () => void list.refetch(),
  });
  return (
    <>
      {lift.error && <ProblemAlert error={lift.error} />}
      <PagedTable
        list={list}
        label={words.heading}
        whenEmpty={words.empty}
        rowKey={(entry) => entry.id}
        columns={[
          { header: words.address, cell: (entry) => entry.address, ltr: true },
          { header: words.reason, cell: (entry) => words[entry.reason] },
          { header: words.detail, cell: (entry) => entry.detail ?? '' },
          { header: common.when, cell: (entry) => time(entry.createdAt) },
          {
            header: words.lifted,
            cell: (entry) =>
              entry.liftedAt === null ? (
                <Button size="compact-sm" variant="light" onClick={() => lift.mutate(entry.id)} aria-label={fill(words.liftOf, { address: entry.address })}>
                  {words.lift}
                </Button>
              ) : (
                fill(words.liftedBy, { when: time(entry.liftedAt), who: entry.liftedBy ?? '—' })
              ),
          },
        ]}
      />
    </>
  );
}

/** A site's suppression list (ADMIN): who is not sent to and why, and a way to send to them again. */
export function SuppressionsScreen() {
  const words = useWords(WORDS);
  const [siteId, setSiteId] = useSiteChoice();
  const [showLifted, setShowLifted] = useState(false);
  return (
    <Stack>
      <Title order={2}>{words.heading}</Title>
      <Text size="sm">{words.explain}</Text>
      <Group align="end">
        <SitePicker siteId={siteId} onChange={setSiteId} />
        <Checkbox label={words.showLifted} checked={showLifted} onChange={(event) => setShowLifted(event.currentTarget.checked)} mb={8} />
      </Group>
      {siteId.trim() !== '' && <SuppressionList siteId={siteId.trim()} showLifted={showLifted} />}
    </Stack>
  );
}
