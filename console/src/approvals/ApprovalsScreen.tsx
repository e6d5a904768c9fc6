import { useState } from 'react';
import { Badge, Button, Code, Group, Paper, Stack, Tabs, Text, Textarea, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, dataOr, usePagedList } from '../api/client';
import type { paths } from '../api/schema';
import { useLocalised, useWords } from '../i18n';
import { useSession } from '../session';
import { MoreButton, StatusBadge, TemporalLink } from '../ui/bits';
import { DataTable } from '../ui/DataTable';
import { ProblemAlert } from '../ui/ProblemAlert';

/** One request as the queue and "my requests" give it: the approval, its decisions and its comparison with what is live. */
type QueueItem = paths['/api/workflow/approvals']['get']['responses'][200]['content']['application/json']['items'][number];

const WORDS = {
  en: {
    heading: 'Approvals',
    queue: 'Waiting for my decision',
    mine: 'My requests',
    decided: 'Decided',
    requestedBy: 'Requested by',
    revision: 'Revision',
    stages: 'Stages',
    decisions: 'Decisions',
    comparison: 'Submitted revision against what is live',
    field: 'Field',
    live: 'Live now',
    submitted: 'Submitted',
    nothingLive: 'Nothing of it is live yet.',
    comment: 'Comment',
    approve: 'Approve',
    reject: 'Reject',
    empty: 'No requests.',
  },
  ar: {
    heading: 'الموافقات',
    queue: 'بانتظار قراري',
    mine: 'طلباتي',
    decided: 'تم البت',
    requestedBy: 'بطلب من',
    revision: 'المراجعة',
    stages: 'المراحل',
    decisions: 'القرارات',
    comparison: 'المراجعة المقدمة مقابل المنشور حاليًا',
    field: 'الحقل',
    live: 'المنشور الآن',
    submitted: 'المقدَّم',
    nothingLive: 'لم يُنشر منه شيء بعد.',
    comment: 'تعليق',
    approve: 'موافقة',
    reject: 'رفض',
    empty: 'لا توجد طلبات.',
  },
};

const shown = (value: unknown) => (value === undefined ? '—' : typeof value === 'string' ? value : JSON.stringify(value));

function Comparison({ item }: { item: QueueItem }) {
  const words = useWords(WORDS);
  if (!item.comparison) return null;
  return (
    <Stack gap={4}>
      <Text fw={700} size="sm">
        {words.comparison}
      </Text>
      {item.comparison.against === 'nothing' && <Text size="sm">{words.nothingLive}</Text>}
      <DataTable
        label={`${words.comparison}: ${item.title ?? item.resourceId}`}
        withColumnBorders
        rows={item.comparison.changes}
        rowKey={(change) => change.path}
        columns={[
          { header: words.field, cell: (change) => <Code>{change.path}</Code> },
          { header: words.live, cell: (change) => shown(change.before) },
          { header: words.submitted, cell: (change) => shown(change.after) },
        ]}
      />
    </Stack>
  );
}

function Request({ item, canDecide }: { item: QueueItem; canDecide: boolean }) {
  const { words, common, time } = useLocalised(WORDS);
  const queries = useQueryClient();
  const [comment, setComment] = useState('');
  const decide = useMutation({
    mutationFn: async (decision: 'APPROVED' | 'REJECTED') =>
      dataOr(
        await api.POST('/api/workflow/approvals/{correlationId}/decide', {
          params: { path: { correlationId: item.correlationId } },
          body: { decision, ...(comment.trim() ? { comment: comment.trim() } : {}) },
        }),
      ),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['approvals'] }),
  });
  const label = item.title ?? `${item.componentType} ${item.resourceId}`;
  return (
    <Paper withBorder p="sm" role="article" aria-label={label}>
      <Stack gap="xs">
        <Group justify="space-between">
          <Text fw={700}>{label}</Text>
          <StatusBadge status={item.status} />
        </Group>
        <Text size="sm">
          {item.componentType} · {common.site} {item.siteId} · {words.revision} {item.revision} · {words.requestedBy} {item.requestedBy} ·{' '}
          {time(item.createdAt)}
        </Text>
        {item.comment && <Text size="sm">“{item.comment}”</Text>}
        <Group gap="xs" aria-label={words.stages}>
          {item.stages.map((stage, index) => (
            <Badge
              key={`${stage.name}-${index}`}
              variant={index === item.currentStage && item.status === 'PENDING' ? 'filled' : 'outline'}
              color="indigo"
              autoContrast
            >
              {index + 1}. {stage.name} ({stage.role})
            </Badge>
          ))}
        </Group>
        {item.decisions.length > 0 && (
          <Stack gap={2} aria-label={words.decisions}>
            {item.decisions.map((decision) => (
              <Text size="sm" key={`${decision.stage}-${decision.decidedBy}`}>
                {decision.stageName}: {decision.decision} · {decision.decidedByName ?? decision.decidedBy} · {time(decision.at)}{' '}
                {decision.comment ? `· “${decision.comment}”` : ''}
              </Text>
            ))}
          </Stack>
        )}
        <Comparison item={item} />
        <TemporalLink uiUrl={decide.data?.uiUrl} />
        {decide.error && <ProblemAlert error={decide.error} />}
        {canDecide && item.status === 'PENDING' && (
          <Group align="end">
            <Textarea label={words.comment} value={comment} onChange={(event) => setComment(event.currentTarget.value)} autosize minRows={1} w={320} />
            <Button color="teal" onClick={() => decide.mutate('APPROVED')} loading={decide.isPending}>
              {words.approve}
            </Button>
            <Button color="red" variant="outline" onClick={() => decide.mutate('REJECTED')} loading={decide.isPending}>
              {words.reject}
            </Button>
          </Group>
        )}
      </Stack>
    </Paper>
  );
}

function RequestList({ which, status, canDecide }: { which: 'queue' | 'mine'; status?: 'PENDING' | 'APPROVED' | 'REJECTED'; canDecide: boolean }) {
  const words = useWords(WORDS);
  const list = usePagedList(['approvals', which, status], async (cursor) =>
    dataOr(await api.GET(which === 'queue' ? '/api/workflow/approvals' : '/api/workflow/approvals/mine', { params: { query: { limit: 20, cursor, status } } })),
  );
  return (
    <Stack>
      {list.error && <ProblemAlert error={list.error} />}
      {list.items.map((item) => (
        <Request key={item.correlationId} item={item} canDecide={canDecide} />
      ))}
      {!list.isLoading && list.items.length === 0 && <Text>{words.empty}</Text>}
      <MoreButton hasMore={list.hasMore} loading={list.loadingMore} onMore={list.loadMore} />
    </Stack>
  );
}

/** Approvals: the manager's queue for their sites, what they decided, and each user's own requests. */
export function ApprovalsScreen() {
  const words = useWords(WORDS);
  const session = useSession();
  return (
    <Stack>
      <Title order={2}>{words.heading}</Title>
      <Tabs defaultValue={session.canDecide ? 'queue' : 'mine'} keepMounted={false}>
        <Tabs.List>
          {session.canDecide && <Tabs.Tab value="queue">{words.queue}</Tabs.Tab>}
          {session.canDecide && <Tabs.Tab value="decided">{words.decided}</Tabs.Tab>}
          <Tabs.Tab value="mine">{words.mine}</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="queue" pt="md">
          <RequestList which="queue" status="PENDING" canDecide />
        </Tabs.Panel>
        <Tabs.Panel value="decided" pt="md">
          <RequestList which="queue" status="APPROVED" canDecide={false} />
        </Tabs.Panel>
        <Tabs.Panel value="mine" pt="md">
          <RequestList which="mine" canDecide={false} />
        </Tabs.Panel>
      </Tabs>
    </Stack>
  );
}
