import { useEffect, useState } from 'react';
import { Badge, Button, Group, NativeSelect, SegmentedControl, SimpleGrid, Stack, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, dataOr, usePagedList } from '../api/client';
import type { paths } from '../api/schema';
import { useLocalised, useWords } from '../i18n';
import { Link } from '../router';
import { useSession } from '../session';
import { ReadOnlyNote, Section, SitePicker, useSiteChoice, StatusBadge, TemporalLink, ActionButton } from '../ui/bits';
import { PagedTable } from '../ui/DataTable';
import { ProblemAlert } from '../ui/ProblemAlert';

const WORDS = {
  en: {
    heading: 'Email templates',
    name: 'Name',
    english: 'English',
    arabic: 'Arabic',
    subject: 'Subject',
    body: 'Body (HTML)',
    variables: 'Variables',
    noVariables: 'This template uses no variables.',
    saveDraft: 'Save as a new draft',
    publish: 'Publish',
    preview: 'Preview',
    sample: 'Sample value of',
    render: 'Render the preview',
    missing: 'Missing variables',
    previewFrame: 'Rendered email',
    sendTest: 'Send a test',
    to: 'To',
    send: 'Send',
    queued: 'Queued',
    logs: 'Send logs',
    recipient: 'Recipient',
    locale: 'Locale',
    attempts: 'Attempts',
    error: 'Error',
    retry: 'Retry',
    deliveryStatus: 'Delivery status',
    allStatuses: 'All',
    channel: 'Channel',
    back: 'Back to the templates',
    newTemplate: 'New template',
    create: 'Create the draft',
  },
  ar: {
    heading: 'قوالب البريد',
    name: 'الاسم',
    english: 'الإنجليزية',
    arabic: 'العربية',
    subject: 'الموضوع',
    body: 'النص (HTML)',
    variables: 'المتغيرات',
    noVariables: 'لا يستخدم هذا القالب متغيرات.',
    saveDraft: 'احفظ كمسودة جديدة',
    publish: 'انشر',
    preview: 'معاينة',
    sample: 'قيمة تجريبية لـ',
    render: 'اعرض المعاينة',
    missing: 'متغيرات ناقصة',
    previewFrame: 'البريد المعروض',
    sendTest: 'أرسل رسالة تجريبية',
    to: 'إلى',
    send: 'أرسل',
    queued: 'في الطابور',
    logs: 'سجلات الإرسال',
    recipient: 'المستلم',
    locale: 'اللغة',
    attempts: 'المحاولات',
    error: 'الخطأ',
    retry: 'أعد المحاولة',
    deliveryStatus: 'حالة التسليم',
    allStatuses: 'الكل',
    channel: 'القناة',
    back: 'عودة إلى القوالب',
    newTemplate: 'قالب جديد',
    create: 'أنشئ المسودة',
  },
};

interface Texts {
  subjectEn: string;
  bodyEn: string;
  subjectAr: string;
  bodyAr: string;
}

/** The `{{path.to.value}}` tokens of a template's texts, as the platform's renderer reads them. */
export function variablesOf(texts: Texts): string[] {
  const names = new Set<string>();
  for (const text of Object.values(texts)) for (const found of text.matchAll(/\{\{\s*([A-Za-z0-9_.]+)\s*\}\}/g)) names.add(found[1]);
  return [...names].sort();
}

/** Sample values as nested variables: `user.name` becomes `{ user: { name } }`; blank ones are left out (and so flagged missing). */
function nested(samples: Record<string, string>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(samples)) {
    if (value === '') continue;
    const parts = name.split('.');
    let at = root;
    for (const part of parts.slice(0, -1)) at = (at[part] ??= {}) as Record<string, unknown>;
    at[parts[parts.length - 1]] = value;
  }
  return root;
}

type Samples = Record<string, string>;

function Preview({ id, variables, samples, setSamples }: { id: string; variables: string[]; samples: Samples; setSamples: (samples: Samples) => void }) {
  const words = useWords(WORDS);
  const [locale, setLocale] = useState<'en' | 'ar'>('ar');
  const preview = useMutation({
    mutationFn: async () =>
      dataOr(await api.POST('/api/email/templates/{id}/preview', { params: { path: { id } }, body: { locale, variables: nested(samples) } })),
  });
  return (
    <Section title={words.preview} gap="xs">
      <SegmentedControl
        value={locale}
        onChange={(value) => setLocale(value as 'en' | 'ar')}
        data={[
          { value: 'en', label: words.english },
          { value: 'ar', label: words.arabic },
        ]}
        aria-label={words.locale}
        w={240}
      />
      {variables.map((name) => (
        <TextInput
          key={name}
          label={`${words.sample} ${name}`}
          value={samples[name] ?? ''}
          onChange={(event) => setSamples({ ...samples, [name]: event.currentTarget.value })}
          w={320}
        />
      ))}
      <Group>
        <ActionButton action={preview} variant="light">
          {words.render}
        </ActionButton>
      </Group>
      {preview.error && <ProblemAlert error={preview.error} />}
      {preview.data && (
        <Stack gap="xs" data-testid="template-preview" data-dir={preview.data.dir}>
          {preview.data.missingVariables.length > 0 && (
            <Group gap="xs" aria-label={words.missing}>
              <Text size="sm" c="red" fw={700}>
                {words.missing}:
              </Text>
              {preview.data.missingVariables.map((name) => (
                <Badge key={name} color="red" variant="filled">
                  {name}
                </Badge>
              ))}
            </Group>
          )}
          <Text fw={700} dir={preview.data.dir} lang={preview.data.locale} data-testid="preview-subject">
            {preview.data.subject}
          </Text>
          {/* The platform's rendering, sandboxed: no script of a template runs in the console. */}
          <iframe
            title={words.previewFrame}
            sandbox=""
            srcDoc={`<!doctype html><html lang="${preview.data.locale}" dir="${preview.data.dir}"><body>${preview.data.html}</body></html>`}
            style={{ width: '100%', minHeight: 200, border: '1px solid var(--mantine-color-gray-4)' }}
          />
        </Stack>
      )}
    </Section>
  );
}

/** A test send of the published template, with the preview's sample values as its variables. */
function SendTest({ id, siteId, samples }: { id: string; siteId: string; samples: Samples }) {
  const words = useWords(WORDS);
  const queries = useQueryClient();
  const [to, setTo] = useState('');
  const [locale, setLocale] = useState<'en' | 'ar'>('ar');
  const send = useMutation({
    mutationFn: async () => dataOr(await api.POST('/api/email/send', { body: { templateId: id, to: to.trim(), locale, siteId, variables: nested(samples) } })),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['email-logs', id] }),
  });
  return (
    <Section title={words.sendTest} gap="xs">
      <Group align="end">
        <TextInput label={words.to} type="email" value={to} onChange={(event) => setTo(event.currentTarget.value)} dir="ltr" w={280} />
        <NativeSelect label={words.locale} data={['ar', 'en']} value={locale} onChange={(event) => setLocale(event.currentTarget.value as 'en' | 'ar')} />
        <ActionButton action={send} disabled={to.trim() === ''}>
          {words.send}
        </ActionButton>
      </Group>
      {send.error && <ProblemAlert error={send.error} />}
      {send.data && (
        <Group>
          <Text size="sm">
            {words.queued}: {send.data.logId}
          </Text>
          <TemporalLink uiUrl={send.data.uiUrl} />
        </Group>
      )}
    </Section>
  );
}

type DeliveryStatus = paths['/api/email/send/{templateId}/logs']['get']['responses'][200]['content']['application/json']['items'][number]['deliveryStatus'];

/** GOV.UK Notify's statuses, in the order a message goes through them; typed, so one the API drops fails the build. */
const DELIVERY_STATUSES: DeliveryStatus[] = ['created', 'sending', 'delivered', 'temporary-failure', 'permanent-failure', 'technical-failure', 'suppressed'];

function SendLogs({ id }: { id: string }) {
  const { words, common, time } = useLocalised(WORDS);
  const session = useSession();
  const [deliveryStatus, setDeliveryStatus] = useState<DeliveryStatus | ''>('');
  const logs = usePagedList(['email-logs', id, deliveryStatus], async (cursor) =>
    dataOr(
      await api.GET('/api/email/send/{templateId}/logs', {
        params: { path: { templateId: id }, query: { limit: 20, cursor, deliveryStatus: deliveryStatus || undefined } },
      }),
    ),
  );
  const retry = useMutation({
    mutationFn: async (logId: string) => dataOr(await api.POST('/api/email/logs/{id}/retry', { params: { path: { id: logId } } })),
    onSuccess: () => void logs.refetch(),
  });
  return (
    <Section title={words.logs} onRefresh={() => void logs.refetch()} gap="xs">
      <NativeSelect
        label={words.deliveryStatus}
        data={[{ value: '', label: words.allStatuses }, ...DELIVERY_STATUSES]}
        value={deliveryStatus}
        onChange={(event) => setDeliveryStatus(event.currentTarget.value as DeliveryStatus | '')}
        w={240}
      />
      {retry.error && <ProblemAlert error={retry.error} />}
      <PagedTable
        list={logs}
        label={words.logs}
        rowKey={(log) => log.id}
        columns={[
          { header: words.recipient, cell: (log) => log.recipient, ltr: true },
          { header: words.locale, cell: (log) => log.locale },
          { header: common.status, cell: (log) => <StatusBadge status={log.status} /> },
          { header: words.deliveryStatus, cell: (log) => <StatusBadge status={log.deliveryStatus} /> },
          { header: words.channel, cell: (log) => log.channel ?? '—' },
          { header: words.attempts, cell: (log) => log.attempts },
          { header: common.when, cell: (log) => time(log.createdAt) },
          { header: words.error, cell: (log) => log.error ?? '' },
          ...(session.isAdmin
            ? [
                {
                  header: '',
                  label: words.retry,
                  cell: (log: (typeof logs.items)[number]) =>
                    log.status === 'FAILED' && (
                      <Button size="compact-xs" variant="light" onClick={() => retry.mutate(String(log.id))}>
                        {words.retry}
                      </Button>
                    ),
                },
              ]
            : []),
        ]}
      />
    </Section>
  );
}

function Template({ id }: { id: string }) {
  const { words, common } = useLocalised(WORDS);
  const session = useSession();
  const queries = useQueryClient();
  const template = useQuery({
    queryKey: ['template', id],
    queryFn: async () => dataOr(await api.GET('/api/email/templates/{id}', { params: { path: { id } } })),
  });
  const [texts, setTexts] = useState<Texts | null>(null);
  const [samples, setSamples] = useState<Samples>({});
  useEffect(() => {
    if (template.data)
      setTexts({
        subjectEn: template.data.subjectEn ?? '',
        bodyEn: template.data.bodyEn ?? '',
        subjectAr: template.data.subjectAr ?? '',
        bodyAr: template.data.bodyAr ?? '',
      });
  }, [template.data]);
  const save = useMutation({
    mutationFn: async () =>
      dataOr(
        await api.PUT('/api/email/templates/{id}', {
          params: { path: { id } },
          body: { name: template.data!.name, roleKey: template.data!.roleKey ?? null, ...texts! },
        }),
      ),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['template', id] }),
  });
  const publish = useMutation({
    mutationFn: async () => dataOr(await api.POST('/api/email/templates/{id}/publish', { params: { path: { id } }, body: {} })),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['template', id] }),
  });
  if (template.error) return <ProblemAlert error={template.error} />;
  if (!template.data || !texts) return <Text>{common.loading}</Text>;
  const canEdit = session.canEdit;
  const variables = variablesOf(texts);
  const field = (key: keyof Texts) => ({
    value: texts[key],
    readOnly: !canEdit,
    onChange: (event: { currentTarget: { value: string } }) => setTexts({ ...texts, [key]: event.currentTarget.value }),
  });
  return (
    <Stack>
      <Link to="/email">{words.back}</Link>
      <Group justify="space-between">
        <Title order={2}>{template.data.name}</Title>
        <Group>
          <Text size="sm">
            {common.site} {template.data.siteId}
          </Text>
          <StatusBadge status={template.data.status} />
        </Group>
      </Group>
      <ReadOnlyNote show={!canEdit} />
      <SimpleGrid cols={2}>
        <Stack gap="xs" dir="ltr" lang="en" aria-label={words.english}>
          <Title order={3}>{words.english}</Title>
          <TextInput label={`${words.subject} (${words.english})`} {...field('subjectEn')} />
          <Textarea label={`${words.body} (${words.english})`} autosize minRows={6} ff="monospace" {...field('bodyEn')} />
        </Stack>
        <Stack gap="xs" dir="rtl" lang="ar" aria-label={words.arabic}>
          <Title order={3}>{words.arabic}</Title>
          <TextInput label={`${words.subject} (${words.arabic})`} {...field('subjectAr')} />
          <Textarea label={`${words.body} (${words.arabic})`} autosize minRows={6} ff="monospace" {...field('bodyAr')} />
        </Stack>
      </SimpleGrid>
      <Group gap="xs" aria-label={words.variables}>
        <Text fw={700} size="sm">
          {words.variables}:
        </Text>
        {variables.length === 0 ? (
          <Text size="sm">{words.noVariables}</Text>
        ) : (
          variables.map((name) => <Badge key={name} variant="outline" tt="none" autoContrast>{`{{${name}}}`}</Badge>)
        )}
      </Group>
      {canEdit && (
        <Group>
          <ActionButton action={save}>{words.saveDraft}</ActionButton>
          <ActionButton action={publish} variant="light">
            {words.publish}
          </ActionButton>
          {publish.data && <TemporalLink uiUrl={publish.data.uiUrl} />}
        </Group>
      )}
      {save.error && <ProblemAlert error={save.error} />}
      {publish.error && <ProblemAlert error={publish.error} />}
      {(session.canEdit || session.canDecide) && (
        <>
          <Preview id={id} variables={variables} samples={samples} setSamples={setSamples} />
          <SendTest id={id} siteId={template.data.siteId} samples={samples} />
        </>
      )}
      <SendLogs id={id} />
    </Stack>
  );
}

function NewTemplate({ siteId }: { siteId: string }) {
  const words = useWords(WORDS);
  const queries = useQueryClient();
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: async () =>
      dataOr(
        await api.POST('/api/email/templates', { body: { siteId, name: name.trim(), roleKey: null, subjectEn: '', bodyEn: '', subjectAr: '', bodyAr: '' } }),
      ),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['templates'] }),
  });
  return (
    <Group align="end">
      <TextInput label={`${words.newTemplate}: ${words.name}`} value={name} onChange={(event) => setName(event.currentTarget.value)} />
      <ActionButton action={create} variant="light" disabled={!siteId || !name.trim()}>
        {words.create}
      </ActionButton>
      {create.error && <ProblemAlert error={create.error} />}
    </Group>
  );
}

function Templates() {
  const { words, common, time } = useLocalised(WORDS);
  const session = useSession();
  const [siteId, setSiteId] = useSiteChoice();
  const list = usePagedList(
    ['templates', siteId],
    async (cursor) => dataOr(await api.GET('/api/email/templates', { params: { query: { siteId, limit: 25, cursor } } })),
    siteId !== '',
  );
  return (
    <Stack>
      <SitePicker siteId={siteId} onChange={setSiteId} />
      <PagedTable
        list={list}
        whenEmpty={common.none}
        label={words.heading}
        striped
        rowKey={(template) => template.id}
        columns={[
          { header: words.name, cell: (template) => <Link to={`/email/${template.id}`}>{template.name}</Link> },
          { header: common.status, cell: (template) => <StatusBadge status={template.status} /> },
          { header: common.when, cell: (template) => time(template.updatedAt) },
        ]}
      />
      <ReadOnlyNote show={!session.canEdit} />
      {session.canEdit && <NewTemplate siteId={siteId} />}
    </Stack>
  );
}

/** Email templates: English and Arabic side by side, the variables they use, a live preview, a test send and the send logs. */
export function EmailScreen({ id }: { id?: string }) {
  const words = useWords(WORDS);
  return (
    <Stack>
      <Title order={2}>{words.heading}</Title>
      {id ? <Template id={id} /> : <Templates />}
    </Stack>
  );
}
