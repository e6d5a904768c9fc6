import { Badge, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, dataOr } from '../api/client';
import { useWords } from '../i18n';
import { Loading } from '../ui/bits';
import { DataTable } from '../ui/DataTable';
import { ProblemAlert } from '../ui/ProblemAlert';

const WORDS = {
  en: {
    heading: 'Health',
    explain: "Each task queue's workers and waiting tasks, as Temporal counts them, and the last hour's emails. Read again every 10 s.",
    queues: 'Task queues',
    queue: 'Queue',
    kind: 'Tasks',
    workflow: 'workflow',
    activity: 'activity',
    pollers: 'Workers polling',
    backlog: 'Waiting',
    noWorker: 'no worker',
    queuesUnknown: 'Temporal did not answer in time: the queues are not known now.',
    emails: 'Emails in the last hour',
    channel: 'Channel',
    status: 'Status',
    count: 'Emails',
    noEmails: 'No email in the last hour.',
    emailsUnknown: 'The database did not answer in time: the emails are not known now.',
    databaseDown: 'The database does not answer.',
  },
  ar: {
    heading: 'الصحة',
    explain: 'العمّال والمهام المنتظرة في كل طابور مهام كما يعدّها Temporal، ورسائل الساعة الأخيرة. تُقرأ من جديد كل 10 ثوانٍ.',
    queues: 'طوابير المهام',
    queue: 'الطابور',
    kind: 'المهام',
    workflow: 'سير العمل',
    activity: 'النشاط',
    pollers: 'العمّال المنتظرون',
    backlog: 'المنتظرة',
    noWorker: 'لا عامل',
    queuesUnknown: 'لم يُجب Temporal في الوقت: الطوابير غير معروفة الآن.',
    emails: 'رسائل الساعة الأخيرة',
    channel: 'القناة',
    status: 'الحالة',
    count: 'الرسائل',
    noEmails: 'لا رسائل في الساعة الأخيرة.',
    emailsUnknown: 'لم تُجب قاعدة البيانات في الوقت: الرسائل غير معروفة الآن.',
    databaseDown: 'قاعدة البيانات لا تجيب.',
  },
};

/** The platform at a glance, for an ADMIN: what the alerts watch, without Prometheus. */
export function HealthScreen() {
  const words = useWords(WORDS);
  const health = useQuery({
    queryKey: ['health'],
    queryFn: async () => dataOr(await api.GET('/api/settings/health')),
    refetchInterval: 10000,
  });
  if (health.error) return <ProblemAlert error={health.error} />;
  if (!health.data) return <Loading />;
  const { queues, emailsLastHour, databaseUp } = health.data;
  return (
    <Stack>
      <Title order={2}>{words.heading}</Title>
      <Text size="sm">{words.explain}</Text>
      {!databaseUp && <Text c="red">{words.databaseDown}</Text>}
      <Title order={3}>{words.queues}</Title>
      {queues === null ? (
        <Text>{words.queuesUnknown}</Text>
      ) : (
        <DataTable
          label={words.queues}
          rows={queues}
          rowKey={(queue) => `${queue.taskQueue}:${queue.kind}`}
          columns={[
            { header: words.queue, cell: (queue) => queue.taskQueue, ltr: true },
            { header: words.kind, cell: (queue) => words[queue.kind] },
            { header: words.pollers, cell: (queue) => (queue.pollers > 0 ? queue.pollers : <Badge color="red">{words.noWorker}</Badge>) },
            { header: words.backlog, cell: (queue) => queue.backlog },
          ]}
        />
      )}
      <Title order={3}>{words.emails}</Title>
      {emailsLastHour === null ? (
        <Text>{words.emailsUnknown}</Text>
      ) : emailsLastHour.length === 0 ? (
        <Text>{words.noEmails}</Text>
      ) : (
        <DataTable
          label={words.emails}
          rows={emailsLastHour}
          rowKey={(row) => `${row.channel}:${row.status}`}
          columns={[
            { header: words.channel, cell: (row) => row.channel, ltr: true },
            { header: words.status, cell: (row) => row.status },
            { header: words.count, cell: (row) => row.count },
          ]}
        />
      )}
    </Stack>
  );
}
