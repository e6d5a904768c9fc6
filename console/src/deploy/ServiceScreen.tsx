import { useEffect, useRef, useState } from 'react';
import { Button, Code, Group, Modal, NumberInput, Paper, ScrollArea, Stack, Switch, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, authorizedFetch, dataOr, ProblemError, problemOf, usePagedList } from '../api/client';
import { useLocalised, useWords } from '../i18n';
import { ListHeading, StatusBadge, TemporalLink, ActionButton } from '../ui/bits';
import { DataTable, PagedTable } from '../ui/DataTable';
import { ProblemAlert } from '../ui/ProblemAlert';
import { useSession } from '../session';
import { ServiceDomains } from './ServiceDomains';
import { ServiceEvents } from './ServiceEvents';
import { ServiceLimits } from './ServiceLimits';
import { ServiceRollout } from './ServiceRollout';

const WORDS = {
  en: {
    instances: 'Instances',
    address: 'Address',
    state: 'State',
    lastHealth: 'Last health check',
    scale: 'Scale',
    scaleTo: 'Instances wanted',
    logs: 'Logs',
    showLogs: 'Show the last lines',
    follow: 'Follow',
    tail: 'Lines',
    history: 'Deploy history',
    image: 'Image',
    started: 'Started',
    finished: 'Finished',
    requestedBy: 'Requested by',
    rollback: 'Roll back to this',
    undeploy: 'Undeploy',
    undeployTitle: 'Undeploy this service?',
    undeployBody: 'Its instances are taken out of the gateway, then its containers and images are removed.',
    core: 'A core service of the platform: it is managed through docker compose, so it cannot be scaled or undeployed here.',
    docs: 'API docs',
    noDocs: 'This service publishes no OpenAPI document.',
    env: 'Environment (secret-looking values masked)',
    operations: 'Latest scale and undeploy runs',
    noLogs: 'No log lines.',
    undeployed: 'is undeployed: its instances, containers and images are gone.',
  },
  ar: {
    instances: 'النسخ',
    address: 'العنوان',
    state: 'الحالة',
    lastHealth: 'آخر فحص صحة',
    scale: 'تغيير عدد النسخ',
    scaleTo: 'عدد النسخ المطلوب',
    logs: 'السجلات',
    showLogs: 'اعرض الأسطر الأخيرة',
    follow: 'متابعة',
    tail: 'الأسطر',
    history: 'سجل النشر',
    image: 'الصورة',
    started: 'البداية',
    finished: 'النهاية',
    requestedBy: 'بطلب من',
    rollback: 'ارجع إلى هذا',
    undeploy: 'إزالة النشر',
    undeployTitle: 'إزالة نشر هذه الخدمة؟',
    undeployBody: 'تُخرج نسخها من البوابة ثم تُحذف حاوياتها وصورها.',
    core: 'خدمة أساسية في المنصة تُدار عبر docker compose، فلا يمكن تغيير نسخها أو إزالتها من هنا.',
    docs: 'توثيق الواجهة',
    noDocs: 'لا تنشر هذه الخدمة وثيقة OpenAPI.',
    env: 'متغيرات البيئة (القيم السرية مخفية)',
    operations: 'آخر عمليات التوسعة والإزالة',
    noLogs: 'لا توجد أسطر.',
    undeployed: 'أزيل نشرها: لم تعد نسخها وحاوياتها وصورها موجودة.',
  },
};

/** Deploys that ran to the end: what a rollback can bring back (the API checks its image is still there). */
const ROLLBACK_TARGETS = ['RUNNING', 'SUPERSEDED'];

/** Streams the service's logs (server-sent events over fetch, so the token goes in a header) until stopped. */
function useFollowedLogs(name: string, on: boolean, onLine: (line: string) => void, onRefused: (error: unknown) => void) {
  const onLineRef = useRef(onLine);
  onLineRef.current = onLine;
  const onRefusedRef = useRef(onRefused);
  onRefusedRef.current = onRefused;
  useEffect(() => {
    if (!on) return;
    const stop = new AbortController();
    void (async () => {
      const response = await authorizedFetch(`/api/infra/services/${encodeURIComponent(name)}/logs?follow=true&tail=50`, { signal: stop.signal });
      if (!response.ok || !response.body) return onRefusedRef.current(await problemOf(response));
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let pending = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        const events = (pending + value).split('\n\n');
        pending = events.pop() ?? '';
        for (const event of events) if (event.startsWith('data: ')) onLineRef.current(event.slice('data: '.length));
      }
    })().catch(() => undefined);
    return () => stop.abort();
  }, [name, on]);
}

function Logs({ name }: { name: string }) {
  const words = useWords(WORDS);
  const [lines, setLines] = useState<string[] | null>(null);
  const [tail, setTail] = useState(200);
  const [following, setFollowing] = useState(false);
  const shown = useMutation({
    mutationFn: async () => {
      const response = await authorizedFetch(`/api/infra/services/${encodeURIComponent(name)}/logs?tail=${tail}`);
      if (!response.ok) throw await problemOf(response);
      return (await response.text()).split('\n').filter((line) => line !== '');
    },
    onSuccess: setLines,
  });
  const [followRefused, setFollowRefused] = useState<unknown>(null);
  useFollowedLogs(
    name,
    following,
    (line) => setLines((before) => [...(before ?? []), line].slice(-2000)),
    (error) => {
      setFollowRefused(error);
      setFollowing(false);
    },
  );
  return (
    <Stack gap="xs">
      <Title order={3}>{words.logs}</Title>
      <Group align="end">
        <NumberInput label={words.tail} value={tail} min={1} max={10000} onChange={(value) => setTail(Number(value) || 200)} w={120} />
        <ActionButton action={shown} variant="light">
          {words.showLogs}
        </ActionButton>
        <Switch
          label={words.follow}
          checked={following}
          onChange={(event) => {
            setFollowRefused(null);
            setFollowing(event.currentTarget.checked);
          }}
        />
      </Group>
      {shown.error && <ProblemAlert error={shown.error} />}
      {followRefused !== null && <ProblemAlert error={followRefused} />}
      {lines && (
        <ScrollArea.Autosize mah={240} type="auto">
          <Code block data-testid="service-logs" dir="ltr">
            {lines.length === 0 ? words.noLogs : lines.join('\n')}
          </Code>
        </ScrollArea.Autosize>
      )}
    </Stack>
  );
}

function History({ name, dynamic, currentDeploymentId }: { name: string; dynamic: boolean; currentDeploymentId: string | null }) {
  const { words, common, time } = useLocalised(WORDS);
  const queries = useQueryClient();
  const history = usePagedList(['service-history', name], async (cursor) =>
    dataOr(await api.GET('/api/infra/services/{name}/deployments', { params: { path: { name }, query: { limit: 20, cursor } } })),
  );
  const rollback = useMutation({
    mutationFn: async (deploymentId: string) =>
      dataOr(await api.POST('/api/infra/services/{name}/rollback', { params: { path: { name } }, body: { deploymentId } })),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['service-history', name] }),
  });
  return (
    <Stack gap="xs">
      <ListHeading title={words.history} onRefresh={() => void history.refetch()} />
      {rollback.error && <ProblemAlert error={rollback.error} />}
      {rollback.data && <TemporalLink uiUrl={rollback.data.uiUrl} />}
      <PagedTable
        list={history}
        label={words.history}
        rowKey={(item) => item.deploymentId}
        columns={[
          { header: words.image, cell: (item) => item.image },
          { header: common.status, cell: (item) => <StatusBadge status={item.status} /> },
          { header: words.started, cell: (item) => time(item.startedAt) },
          { header: words.finished, cell: (item) => time(item.finishedAt) },
          { header: words.requestedBy, cell: (item) => item.requestedBy },
          ...(dynamic
            ? [
                {
                  header: '',
                  label: words.rollback,
                  cell: (item: (typeof history.items)[number]) =>
                    ROLLBACK_TARGETS.includes(item.status) &&
                    item.deploymentId !== currentDeploymentId && (
                      <Button size="xs" variant="light" onClick={() => rollback.mutate(item.deploymentId)} loading={rollback.isPending}>
                        {words.rollback}
                      </Button>
                    ),
                },
              ]
            : []),
        ]}
      />
    </Stack>
  );
}

function ApiDocs({ name, dynamic }: { name: string; dynamic: boolean }) {
  const words = useWords(WORDS);
  const [open, setOpen] = useState(false);
  const docs = useQuery({
    queryKey: ['service-docs', name],
    enabled: open,
    queryFn: async () => {
      const url = dynamic ? (dataOr(await api.GET('/api/docs/services')).find((entry) => entry.name === name)?.openapiUrl ?? null) : '/api/openapi.json';
      if (!url) return null;
      const response = await authorizedFetch(url);
      if (!response.ok) throw await problemOf(response);
      return { url, document: JSON.stringify(await response.json(), null, 2) };
    },
  });
  return (
    <>
      <Button variant="default" onClick={() => setOpen(true)}>
        {words.docs}
      </Button>
      <Modal opened={open} onClose={() => setOpen(false)} title={`${words.docs}: ${name}`} size="xl">
        {docs.error && <ProblemAlert error={docs.error} />}
        {docs.data === null && <Text>{words.noDocs}</Text>}
        {docs.data && (
          <Stack gap="xs">
            <Code>{docs.data.url}</Code>
            <ScrollArea.Autosize mah={400}>
              <Code block dir="ltr">
                {docs.data.document}
              </Code>
            </ScrollArea.Autosize>
          </Stack>
        )}
      </Modal>
    </>
  );
}

/** One service: its instances and health, scale, limits, domains, logs, events, deploy history with rollback, undeploy, its API docs. */
export function ServiceScreen({ name }: { name: string }) {
  const { words, common, time } = useLocalised(WORDS);
  const session = useSession();
  const queries = useQueryClient();
  const service = useQuery({
    queryKey: ['service', name],
    queryFn: async () => dataOr(await api.GET('/api/infra/services/{name}', { params: { path: { name } } })),
    refetchInterval: 2000,
  });
  const [instances, setInstances] = useState<number | null>(null);
  const [confirming, setConfirming] = useState(false);
  const refresh = () => queries.invalidateQueries({ queryKey: ['service', name] });
  const scale = useMutation({
    mutationFn: async (wanted: number) =>
      dataOr(await api.POST('/api/infra/services/{name}/scale', { params: { path: { name } }, body: { instances: wanted } })),
    onSuccess: refresh,
  });
  const undeploy = useMutation({
    mutationFn: async () => dataOr(await api.DELETE('/api/infra/services/{name}', { params: { path: { name } } })),
    onSuccess: () => {
      setConfirming(false);
      void refresh();
    },
  });
  if (service.error && undeploy.data && service.error instanceof ProblemError && service.error.problem.code === 'SERVICE_NOT_FOUND') {
    // The undeploy this screen started has finished: the registry no longer has the service.
    return (
      <Stack>
        <Title order={2}>{name}</Title>
        <Text data-testid="undeployed">
          {name} {words.undeployed}
        </Text>
        <TemporalLink uiUrl={undeploy.data.uiUrl} />
      </Stack>
    );
  }
  if (service.error) return <ProblemAlert error={service.error} />;
  if (!service.data) return <Text>{common.loading}</Text>;
  const detail = service.data;
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>{detail.name}</Title>
        <Group>
          <StatusBadge status={detail.status} />
          <ApiDocs name={detail.name} dynamic={detail.dynamic} />
        </Group>
      </Group>
      <Text size="sm">
        {detail.group} · {detail.kind} · {detail.image ?? '—'} · :{detail.port ?? '—'} {detail.description ? `· ${detail.description}` : ''}
      </Text>
      {!detail.dynamic && <Text c="gray.7">{words.core}</Text>}
      {detail.dynamic && <ServiceRollout name={detail.name} />}
      <Paper withBorder p="sm">
        <Title order={3}>{words.instances}</Title>
        <DataTable
          label={words.instances}
          rows={detail.instances}
          rowKey={(instance) => instance.id}
          columns={[
            { header: words.address, cell: (instance) => instance.address, ltr: true },
            { header: words.state, cell: (instance) => <StatusBadge status={instance.state} /> },
            { header: words.lastHealth, cell: (instance) => time(instance.lastHealthAt) },
          ]}
        />
        {detail.dynamic && (
          <Group align="end" mt="sm">
            <NumberInput
              label={words.scaleTo}
              min={1}
              max={20}
              value={instances ?? detail.desiredInstances}
              onChange={(value) => setInstances(Number(value))}
              w={160}
            />
            <Button onClick={() => scale.mutate(instances ?? detail.desiredInstances)} loading={scale.isPending}>
              {words.scale}
            </Button>
            {scale.data && <TemporalLink uiUrl={scale.data.uiUrl} />}
          </Group>
        )}
        {scale.error && <ProblemAlert error={scale.error} />}
      </Paper>
      {/* A dynamic service's limits, domains and events are ADMIN's (the API answers 403 to anyone else, 409 for a core service). */}
      {detail.dynamic && session.isAdmin && <ServiceLimits name={detail.name} />}
      {detail.dynamic && session.isAdmin && <ServiceDomains name={detail.name} />}
      {detail.operations && detail.operations.length > 0 && (
        <Stack gap={4}>
          <Title order={3}>{words.operations}</Title>
          {detail.operations.map((operation) => (
            <Group key={operation.workflowId} gap="xs">
              <Text size="sm">
                {operation.kind} · {operation.status} · {operation.stage ?? '—'} · {time(operation.startedAt)}
              </Text>
              <TemporalLink uiUrl={operation.uiUrl} />
            </Group>
          ))}
        </Stack>
      )}
      {Object.keys(detail.env).length > 0 && (
        <Stack gap={4}>
          <Title order={3}>{words.env}</Title>
          <Code block dir="ltr">
            {Object.entries(detail.env)
              .map(([key, value]) => `${key}=${value}`)
              .join('\n')}
          </Code>
        </Stack>
      )}
      {detail.dynamic && <Logs name={detail.name} />}
      {detail.dynamic && session.isAdmin && <ServiceEvents name={detail.name} />}
      <History name={detail.name} dynamic={detail.dynamic} currentDeploymentId={detail.currentDeploymentId} />
      {detail.dynamic && (
        <Group>
          <Button color="red" variant="outline" onClick={() => setConfirming(true)}>
            {words.undeploy}
          </Button>
          {undeploy.data && <TemporalLink uiUrl={undeploy.data.uiUrl} />}
        </Group>
      )}
      {undeploy.error && <ProblemAlert error={undeploy.error} />}
      <Modal opened={confirming} onClose={() => setConfirming(false)} title={words.undeployTitle}>
        <Stack>
          <Text>{words.undeployBody}</Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setConfirming(false)}>
              {common.cancel}
            </Button>
            <ActionButton action={undeploy} color="red">
              {words.undeploy}
            </ActionButton>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}
