import { useState, type ChangeEvent } from 'react';
import { Button, Checkbox, Group, Modal, NativeSelect, NumberInput, PasswordInput, Stack, Switch, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, dataOr, download, usePagedList } from '../api/client';
import { useLocalised, useWords } from '../i18n';
import { Section, StatusBadge, TemporalLink, ActionButton } from '../ui/bits';
import { DataTable, PagedTable } from '../ui/DataTable';
import { fieldError, ProblemAlert } from '../ui/ProblemAlert';

const LOG_TYPES = ['SCHEDULER_JOB_LOG', 'EMAIL_LOG', 'INTEGRATION_LOG'] as const;
type LogType = (typeof LOG_TYPES)[number];

const WORDS = {
  en: {
    heading: 'Governance → Archiving',
    policies: 'Retention policies',
    logType: 'Log type',
    siteBlank: 'Site (blank: the global policy)',
    global: 'global',
    retention: 'Retention (days)',
    enabled: 'Enabled',
    format: 'Archive format',
    platformFormat: "the platform's (ARCHIVE_FORMAT)",
    sink: 'Archive sink',
    platformSink: "the platform's (ARCHIVE_SINK)",
    fileSink: 'Files (the asset folder)',
    s3Sink: 'S3-compatible store',
    endpoint: "Endpoint (blank: the platform's store, ARCHIVE_S3_*)",
    bucket: 'Bucket',
    prefix: 'Prefix (ends with /)',
    region: 'Region',
    pathStyle: 'Path-style addresses',
    accessKeyId: 'Access key id',
    secretAccessKey: 'Secret access key',
    secretKept: 'Stored: leave blank to keep it',
    add: 'Add policy',
    edit: 'Edit',
    editTitle: 'Edit the policy',
    disable: 'Disable',
    enable: 'Enable',
    resolve: 'Which policy applies to a site?',
    resolveButton: 'Resolve',
    resolved: 'Applies',
    source: 'from',
    off: 'No archiving: no enabled policy applies.',
    run: 'Run an archive',
    allTypes: 'All three log types',
    dryRun: 'Dry run (count only: nothing is exported or deleted)',
    runNow: 'Run now',
    progress: 'Run',
    exported: 'Rows exported',
    deleted: 'Rows deleted',
    cutoff: 'Older than',
    files: 'Archive files',
    filesOf: 'Archive files of a site',
    show: 'Show',
    file: 'File',
    size: 'Size',
    download: 'Download',
    history: 'Run history',
    job: 'Job',
    rows: 'Rows',
    message: 'Message',
    days: 'days',
  },
  ar: {
    heading: 'الحوكمة ← الأرشفة',
    policies: 'سياسات الاحتفاظ',
    logType: 'نوع السجل',
    siteBlank: 'الموقع (فارغ: السياسة العامة)',
    global: 'عام',
    retention: 'مدة الاحتفاظ (أيام)',
    enabled: 'مفعّلة',
    format: 'صيغة الأرشيف',
    platformFormat: 'صيغة المنصة (ARCHIVE_FORMAT)',
    sink: 'وجهة الأرشيف',
    platformSink: 'وجهة المنصة (ARCHIVE_SINK)',
    fileSink: 'ملفات (مجلد الأصول)',
    s3Sink: 'مخزن متوافق مع S3',
    endpoint: 'نقطة الوصول (فارغة: مخزن المنصة، ARCHIVE_S3_*)',
    bucket: 'الحاوية',
    prefix: 'البادئة (تنتهي بـ /)',
    region: 'المنطقة',
    pathStyle: 'عناوين بنمط المسار',
    accessKeyId: 'معرّف مفتاح الوصول',
    secretAccessKey: 'مفتاح الوصول السري',
    secretKept: 'محفوظ: اتركه فارغًا للإبقاء عليه',
    add: 'أضف سياسة',
    edit: 'تعديل',
    editTitle: 'تعديل السياسة',
    disable: 'تعطيل',
    enable: 'تفعيل',
    resolve: 'أي سياسة تنطبق على موقع؟',
    resolveButton: 'تحقق',
    resolved: 'تنطبق',
    source: 'من',
    off: 'لا أرشفة: لا تنطبق أي سياسة مفعّلة.',
    run: 'تشغيل الأرشفة',
    allTypes: 'أنواع السجلات الثلاثة',
    dryRun: 'تشغيل تجريبي (عدّ فقط: لا تصدير ولا حذف)',
    runNow: 'شغّل الآن',
    progress: 'التشغيل',
    exported: 'الصفوف المصدّرة',
    deleted: 'الصفوف المحذوفة',
    cutoff: 'أقدم من',
    files: 'ملفات الأرشيف',
    filesOf: 'ملفات أرشيف موقع',
    show: 'اعرض',
    file: 'الملف',
    size: 'الحجم',
    download: 'تنزيل',
    history: 'سجل التشغيل',
    job: 'المهمة',
    rows: 'الصفوف',
    message: 'الرسالة',
    days: 'أيام',
  },
};

type ArchiveFormat = 'csv' | 'parquet';
type ArchiveSink = 'file' | 's3';
type PolicyStore = {
  endpoint: string;
  bucket: string;
  prefix: string | null;
  region: string;
  forcePathStyle: boolean;
  accessKeyId: string | null;
  secretAccessKeySet: boolean;
};
type Policy = {
  id: string;
  logType: LogType;
  siteId: string | null;
  retentionDays: number;
  enabled: boolean;
  format: ArchiveFormat | null;
  sink: ArchiveSink | null;
  s3: PolicyStore | null;
};

/** Where a policy's files go, as its row says it: the sink, and an S3 policy's own store (bucket at host). */
function sinkOf(policy: Policy): string {
  if (!policy.sink) return '—';
  if (policy.sink === 'file' || !policy.s3) return policy.sink;
  return `s3 · ${policy.s3.bucket} @ ${new URL(policy.s3.endpoint).host}${policy.s3.prefix ? ` / ${policy.s3.prefix}` : ''}`;
}

/** The store fields of an `s3` policy as edited; a blank endpoint is the platform's store. */
type StoreDraft = { endpoint: string; bucket: string; prefix: string; region: string; forcePathStyle: boolean; accessKeyId: string; secretAccessKey: string };

const draftOf = (store: PolicyStore | null): StoreDraft => ({
  endpoint: store?.endpoint ?? '',
  bucket: store?.bucket ?? '',
  prefix: store?.prefix ?? '',
  region: store?.region ?? 'us-east-1',
  forcePathStyle: store?.forcePathStyle ?? true,
  accessKeyId: store?.accessKeyId ?? '',
  secretAccessKey: '',
});

/** The body's `s3`: null for the platform's store; the secret only when one was typed (else the stored one is kept). */
function storeBody(draft: StoreDraft) {
  if (draft.endpoint.trim() === '') return null;
  return {
    endpoint: draft.endpoint.trim(),
    bucket: draft.bucket.trim(),
    prefix: draft.prefix.trim(),
    region: draft.region.trim(),
    forcePathStyle: draft.forcePathStyle,
    ...(draft.accessKeyId.trim() ? { accessKeyId: draft.accessKeyId.trim() } : {}),
    ...(draft.secretAccessKey ? { secretAccessKey: draft.secretAccessKey } : {}),
  };
}

/** A policy's sink, and for S3 its own store (or none: the platform's). The secret is written, never shown. */
function SinkFields(props: {
  sink: ArchiveSink | null;
  onSink: (sink: ArchiveSink | null) => void;
  draft: StoreDraft;
  onDraft: (draft: StoreDraft) => void;
  secretStored: boolean;
  error: unknown;
}) {
  const words = useWords(WORDS);
  const { draft, onDraft, error } = props;
  const field = (key: keyof StoreDraft) => ({
    value: String(draft[key]),
    onChange: (event: ChangeEvent<HTMLInputElement>) => onDraft({ ...draft, [key]: event.currentTarget.value }),
    error: fieldError(error, `s3.${key}`),
    dir: 'ltr' as const,
  });
  return (
    <>
      <NativeSelect
        label={words.sink}
        data={[
          { value: '', label: words.platformSink },
          { value: 'file', label: words.fileSink },
          { value: 's3', label: words.s3Sink },
        ]}
        value={props.sink ?? ''}
        onChange={(event) => props.onSink((event.currentTarget.value || null) as ArchiveSink | null)}
      />
      {props.sink === 's3' && (
        <>
          <TextInput label={words.endpoint} placeholder="https://s3.example.org" {...field('endpoint')} />
          {draft.endpoint.trim() !== '' && (
            <>
              <TextInput label={words.bucket} {...field('bucket')} />
              <TextInput label={words.prefix} {...field('prefix')} />
              <TextInput label={words.region} {...field('region')} />
              <Switch
                label={words.pathStyle}
                checked={draft.forcePathStyle}
                onChange={(event) => onDraft({ ...draft, forcePathStyle: event.currentTarget.checked })}
              />
              <TextInput label={words.accessKeyId} autoComplete="off" {...field('accessKeyId')} />
              <PasswordInput
                label={words.secretAccessKey}
                placeholder={props.secretStored ? words.secretKept : undefined}
                autoComplete="new-password"
                {...field('secretAccessKey')}
              />
            </>
          )}
        </>
      )}
    </>
  );
}

/** A policy's archive format: CSV, Parquet (zstd), or none of its own (blank: the platform's). */
function FormatSelect({ value, onChange }: { value: ArchiveFormat | null; onChange: (format: ArchiveFormat | null) => void }) {
  const words = useWords(WORDS);
  return (
    <NativeSelect
      label={words.format}
      data={[
        { value: '', label: words.platformFormat },
        { value: 'csv', label: 'CSV' },
        { value: 'parquet', label: 'Parquet (zstd)' },
      ]}
      value={value ?? ''}
      onChange={(event) => onChange((event.currentTarget.value || null) as ArchiveFormat | null)}
    />
  );
}

function PolicyForm({ onSaved }: { onSaved: () => void }) {
  const words = useWords(WORDS);
  const [logType, setLogType] = useState<LogType>('EMAIL_LOG');
  const [siteId, setSiteId] = useState('');
  const [retentionDays, setRetentionDays] = useState<string | number>(90);
  const [enabled, setEnabled] = useState(true);
  const [format, setFormat] = useState<ArchiveFormat | null>(null);
  const create = useMutation({
    mutationFn: async () =>
      dataOr(
        await api.POST('/api/settings/archive-policies', {
          body: { logType, siteId: siteId.trim() || null, retentionDays: Number(retentionDays), enabled, format },
        }),
      ),
    onSuccess: onSaved,
  });
  return (
    <Group align="start">
      <NativeSelect label={words.logType} data={[...LOG_TYPES]} value={logType} onChange={(event) => setLogType(event.currentTarget.value as LogType)} />
      <TextInput
        label={words.siteBlank}
        value={siteId}
        onChange={(event) => setSiteId(event.currentTarget.value)}
        error={fieldError(create.error, 'siteId')}
        dir="ltr"
      />
      <NumberInput label={words.retention} value={retentionDays} onChange={setRetentionDays} error={fieldError(create.error, 'retentionDays')} w={150} />
      <FormatSelect value={format} onChange={setFormat} />
      <Switch label={words.enabled} checked={enabled} onChange={(event) => setEnabled(event.currentTarget.checked)} mt={32} />
      <ActionButton action={create} mt={24}>
        {words.add}
      </ActionButton>
      {create.error && !fieldError(create.error, 'retentionDays') && !fieldError(create.error, 'siteId') && <ProblemAlert error={create.error} />}
    </Group>
  );
}

function EditPolicy({ policy, onClose }: { policy: Policy; onClose: () => void }) {
  const { words, common } = useLocalised(WORDS);
  const queries = useQueryClient();
  const [retentionDays, setRetentionDays] = useState<string | number>(policy.retentionDays);
  const [format, setFormat] = useState<ArchiveFormat | null>(policy.format);
  const [sink, setSink] = useState<ArchiveSink | null>(policy.sink);
  const [store, setStore] = useState<StoreDraft>(draftOf(policy.s3));
  const save = useMutation({
    mutationFn: async () =>
      dataOr(
        await api.PUT('/api/settings/archive-policies/{id}', {
          params: { path: { id: policy.id } },
          body: { retentionDays: Number(retentionDays), enabled: policy.enabled, format, sink, s3: sink === 's3' ? storeBody(store) : null },
        }),
      ),
    onSuccess: () => {
      void queries.invalidateQueries({ queryKey: ['archive-policies'] });
      onClose();
    },
  });
  return (
    <Modal opened onClose={onClose} title={words.editTitle}>
      <Stack>
        <Text size="sm">
          {policy.logType} · {policy.siteId ?? words.global}
        </Text>
        <NumberInput label={words.retention} value={retentionDays} onChange={setRetentionDays} error={fieldError(save.error, 'retentionDays')} />
        <FormatSelect value={format} onChange={setFormat} />
        <SinkFields sink={sink} onSink={setSink} draft={store} onDraft={setStore} secretStored={policy.s3?.secretAccessKeySet ?? false} error={save.error} />
        {save.error && !fieldError(save.error, 'retentionDays') && <ProblemAlert error={save.error} />}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            {common.cancel}
          </Button>
          <ActionButton action={save}>{common.save}</ActionButton>
        </Group>
      </Stack>
    </Modal>
  );
}

function Policies() {
  const { words, common } = useLocalised(WORDS);
  const queries = useQueryClient();
  const [editing, setEditing] = useState<Policy | null>(null);
  const policies = usePagedList(['archive-policies'], async (cursor) =>
    dataOr(await api.GET('/api/settings/archive-policies', { params: { query: { limit: 100, cursor } } })),
  );
  const refresh = () => queries.invalidateQueries({ queryKey: ['archive-policies'] });
  const toggle = useMutation({
    mutationFn: async (policy: Policy) =>
      dataOr(
        await api.PUT('/api/settings/archive-policies/{id}', {
          params: { path: { id: policy.id } },
          body: { retentionDays: policy.retentionDays, enabled: !policy.enabled },
        }),
      ),
    onSuccess: refresh,
  });
  return (
    <Section title={words.policies}>
      {toggle.error && <ProblemAlert error={toggle.error} />}
      <PagedTable
        list={policies}
        label={words.policies}
        rowKey={(policy) => policy.id}
        columns={[
          { header: words.logType, cell: (policy) => policy.logType },
          { header: common.site, cell: (policy) => policy.siteId ?? words.global },
          { header: words.retention, cell: (policy) => policy.retentionDays },
          { header: words.format, cell: (policy) => policy.format ?? '—' },
          { header: words.sink, cell: (policy) => sinkOf(policy), ltr: true },
          { header: words.enabled, cell: (policy) => (policy.enabled ? '✓' : '—') },
          {
            header: '',
            label: words.edit,
            cell: (policy) => (
              <Group gap="xs">
                <Button
                  size="xs"
                  variant="light"
                  onClick={() => setEditing(policy)}
                  aria-label={`${words.edit} ${policy.logType} ${policy.siteId ?? words.global}`}
                >
                  {words.edit}
                </Button>
                <Button
                  size="xs"
                  variant="default"
                  onClick={() => toggle.mutate(policy)}
                  aria-label={`${policy.enabled ? words.disable : words.enable} ${policy.logType} ${policy.siteId ?? words.global}`}
                >
                  {policy.enabled ? words.disable : words.enable}
                </Button>
              </Group>
            ),
          },
        ]}
      />
      <PolicyForm onSaved={refresh} />
      {editing && <EditPolicy policy={editing} onClose={() => setEditing(null)} />}
    </Section>
  );
}

function Resolve() {
  const { words, common } = useLocalised(WORDS);
  const [logType, setLogType] = useState<LogType>('EMAIL_LOG');
  const [siteId, setSiteId] = useState('');
  const resolve = useMutation({
    mutationFn: async () => dataOr(await api.GET('/api/settings/archive-policies/resolve', { params: { query: { logType, siteId: siteId.trim() } } })),
  });
  return (
    <Section title={words.resolve} gap="xs">
      <Group align="end">
        <NativeSelect label={words.logType} data={[...LOG_TYPES]} value={logType} onChange={(event) => setLogType(event.currentTarget.value as LogType)} />
        <TextInput label={common.site} value={siteId} onChange={(event) => setSiteId(event.currentTarget.value)} dir="ltr" />
        <ActionButton action={resolve} variant="light">
          {words.resolveButton}
        </ActionButton>
      </Group>
      {resolve.error && <ProblemAlert error={resolve.error} />}
      {resolve.data && (
        <Text data-testid="resolved">
          {resolve.data.enabled ? `${words.resolved}: ${resolve.data.retentionDays} ${words.days} (${words.source} ${resolve.data.source})` : words.off}
        </Text>
      )}
    </Section>
  );
}

function RunProgress({ workflowId, uiUrl }: { workflowId: string; uiUrl: string }) {
  const { words, common, time } = useLocalised(WORDS);
  const run = useQuery({
    queryKey: ['archive-run', workflowId],
    queryFn: async () => dataOr(await api.GET('/api/settings/archive-runs/{workflowId}', { params: { path: { workflowId } } })),
    refetchInterval: (query) => (query.state.data && query.state.data.status !== 'RUNNING' ? false : 1000),
  });
  if (run.error) return <ProblemAlert error={run.error} />;
  if (!run.data) return <Text>{common.loading}</Text>;
  return (
    <Stack gap="xs" data-testid="archive-run" data-status={run.data.status}>
      <Group>
        <Text fw={700}>
          {words.progress}: {run.data.logType} {run.data.dryRun ? `(${words.dryRun.split(' (')[0]})` : ''}
        </Text>
        <StatusBadge status={run.data.status} />
        <TemporalLink uiUrl={uiUrl} />
      </Group>
      <DataTable
        label={`${words.progress} ${run.data.logType}`}
        rows={run.data.sites}
        rowKey={(site) => site.siteId}
        columns={[
          { header: common.site, cell: (site) => site.siteId },
          {
            header: common.status,
            cell: (site) => (
              <>
                <StatusBadge status={site.state} /> {site.error}
              </>
            ),
          },
          { header: words.cutoff, cell: (site) => time(site.cutoff) },
          { header: words.exported, cell: (site) => site.rowsExported },
          { header: words.deleted, cell: (site) => site.rowsDeleted },
        ]}
      />
    </Stack>
  );
}

function RunNow() {
  const { words, common } = useLocalised(WORDS);
  const [logType, setLogType] = useState<LogType | ''>('');
  const [siteId, setSiteId] = useState('');
  const [dryRun, setDryRun] = useState(false);
  const start = useMutation({
    mutationFn: async () =>
      dataOr(
        await api.POST('/api/settings/archive-policies/run', {
          body: { ...(logType ? { logType } : {}), ...(siteId.trim() ? { siteId: siteId.trim() } : {}), dryRun },
        }),
      ),
  });
  return (
    <Section title={words.run} gap="xs">
      <Group align="end">
        <NativeSelect
          label={words.logType}
          data={[{ value: '', label: words.allTypes }, ...LOG_TYPES.map((type) => ({ value: type, label: type }))]}
          value={logType}
          onChange={(event) => setLogType(event.currentTarget.value as LogType | '')}
        />
        <TextInput label={common.site} value={siteId} onChange={(event) => setSiteId(event.currentTarget.value)} dir="ltr" />
        <ActionButton action={start}>{words.runNow}</ActionButton>
      </Group>
      <Checkbox label={words.dryRun} checked={dryRun} onChange={(event) => setDryRun(event.currentTarget.checked)} />
      {start.error && <ProblemAlert error={start.error} />}
      {start.data?.runs.map((run) => (
        <RunProgress key={run.runId} workflowId={run.workflowId} uiUrl={run.uiUrl} />
      ))}
    </Section>
  );
}

function ArchiveFiles() {
  const { words, common, time } = useLocalised(WORDS);
  const [siteId, setSiteId] = useState('');
  const [shown, setShown] = useState<string | null>(null);
  const files = usePagedList(
    ['archive-files', shown],
    async (cursor) => dataOr(await api.GET('/api/assets', { params: { query: { siteId: shown!, folder: '/archive', limit: 50, cursor } } })),
    shown !== null,
  );
  const save = useMutation({ mutationFn: async (file: { id: string; name: string }) => download(`/api/assets/${file.id}/download`, file.name) });
  return (
    <Section title={words.files} gap="xs">
      <Group align="end">
        <TextInput label={words.filesOf} value={siteId} onChange={(event) => setSiteId(event.currentTarget.value)} dir="ltr" />
        <Button variant="light" disabled={siteId.trim() === ''} onClick={() => setShown(siteId.trim())}>
          {words.show}
        </Button>
      </Group>
      {save.error && <ProblemAlert error={save.error} />}
      {shown && (
        <PagedTable
          list={files}
          label={`${words.files}: ${shown}`}
          rowKey={(file) => file.id}
          columns={[
            { header: words.file, cell: (file) => file.name, ltr: true },
            { header: words.size, cell: (file) => String(file.sizeBytes ?? '') },
            { header: common.when, cell: (file) => time(file.createdAt) },
            {
              header: '',
              label: words.download,
              cell: (file) => (
                <Button size="xs" variant="light" onClick={() => save.mutate({ id: file.id, name: file.name })} aria-label={`${words.download} ${file.name}`}>
                  {words.download}
                </Button>
              ),
            },
          ]}
        />
      )}
    </Section>
  );
}

function RunHistory() {
  const { words, common, time } = useLocalised(WORDS);
  const history = usePagedList(['job-logs'], async (cursor) =>
    dataOr(await api.GET('/api/settings/scheduler-job-logs', { params: { query: { limit: 20, cursor } } })),
  );
  return (
    <Section title={words.history} onRefresh={() => void history.refetch()} gap="xs">
      <PagedTable
        list={history}
        label={words.history}
        rowKey={(entry) => entry.id}
        columns={[
          { header: words.job, cell: (entry) => entry.jobName },
          { header: common.site, cell: (entry) => entry.siteId },
          { header: common.status, cell: (entry) => <StatusBadge status={entry.status} /> },
          { header: common.when, cell: (entry) => time(entry.startedAt) },
          { header: words.rows, cell: (entry) => entry.rowsAffected },
          { header: words.message, cell: (entry) => entry.message },
        ]}
      />
    </Section>
  );
}

/** Governance → Archiving: retention per log type and site, what applies where, runs with their progress, and the files they made. */
export function ArchivingScreen() {
  const words = useWords(WORDS);
  return (
    <Stack>
      <Title order={2}>{words.heading}</Title>
      <Policies />
      <Resolve />
      <RunNow />
      <ArchiveFiles />
      <RunHistory />
    </Stack>
  );
}
