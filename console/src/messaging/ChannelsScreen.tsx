import { useState } from 'react';
import { Button, Checkbox, Group, NativeSelect, NumberInput, PasswordInput, Stack, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, dataOr } from '../api/client';
import { fill, useLocalised, useWords } from '../i18n';
import { Section, StatusBadge, ActionButton, READABLE_DESCRIPTION } from '../ui/bits';
import { DataTable } from '../ui/DataTable';
import { fieldError, ProblemAlert } from '../ui/ProblemAlert';
import { activeInOrder, Channel, ChannelConfig, CONFIG_PATHS as PATHS, useSetOrder } from './channel-configs';
import { ChannelOrder } from './ChannelOrder';
import { RateLimit } from './RateLimit';
import { StatusCallbacks } from './StatusCallbacks';

const WORDS = {
  en: {
    heading: 'Email and SMS channels',
    email: 'Email configurations',
    sms: 'SMS configurations',
    name: 'Name',
    transport: 'Transport',
    active: 'Active',
    validate: 'Validate',
    activate: 'Activate',
    add: 'Add a configuration',
    edit: 'Edit',
    editOf: 'Edit {name}',
    addToOrder: 'Add to the order',
    addToOrderOf: 'Add to the order: {name}',
    rateLimit: 'Rate limit',
    ratePerSecond: 'Rate limit (messages per second)',
    rateHint: '0.1 to 10000, across every worker; empty: no limit',
    burst: 'Burst',
    burstHint: "1 to 10000 at once; empty: one second's worth",
    passwordKept: 'Left empty, the stored password is kept',
    smtpHost: 'SMTP host',
    smtpPort: 'SMTP port',
    smtpUsername: 'SMTP user',
    smtpPassword: 'SMTP password (write-only)',
    smtpUseTls: 'STARTTLS',
    smtpAllowPlain: 'Log in without TLS (a relay with no STARTTLS)',
    serviceUrl: 'Service URL',
    serviceUsername: 'Service user',
    servicePassword: 'Service password (write-only)',
    soapMethodName: 'SOAP method',
    restMethodType: 'REST method',
    sampleRequest: 'Sample request (with {{emailto}}, {{emailsubject}}, {{emailcontent}} or {{phoneto}}, {{messagecontent}})',
    passwordSet: 'a password is set',
    create: 'Save the configuration',
    ok: 'Reachable',
    notOk: 'Not reachable',
  },
  ar: {
    heading: 'قنوات البريد والرسائل',
    email: 'إعدادات البريد',
    sms: 'إعدادات الرسائل القصيرة',
    name: 'الاسم',
    transport: 'وسيلة النقل',
    active: 'مفعّلة',
    validate: 'تحقق',
    activate: 'فعّل',
    add: 'أضف إعدادًا',
    edit: 'عدّل',
    editOf: 'عدّل {name}',
    addToOrder: 'أضف إلى الترتيب',
    addToOrderOf: 'أضف إلى الترتيب: {name}',
    rateLimit: 'حد المعدل',
    ratePerSecond: 'حد المعدل (رسائل في الثانية)',
    rateHint: 'من 0.1 إلى 10000، لكل العمال معًا؛ فارغ: بلا حد',
    burst: 'الدفعة',
    burstHint: 'من 1 إلى 10000 دفعة واحدة؛ فارغ: بقدر ثانية واحدة',
    passwordKept: 'إن تُرك فارغًا تبقى كلمة المرور المحفوظة',
    smtpHost: 'خادم SMTP',
    smtpPort: 'منفذ SMTP',
    smtpUsername: 'مستخدم SMTP',
    smtpPassword: 'كلمة مرور SMTP (للكتابة فقط)',
    smtpUseTls: 'STARTTLS',
    smtpAllowPlain: 'تسجيل الدخول دون TLS (خادم بلا STARTTLS)',
    serviceUrl: 'عنوان الخدمة',
    serviceUsername: 'مستخدم الخدمة',
    servicePassword: 'كلمة مرور الخدمة (للكتابة فقط)',
    soapMethodName: 'عملية SOAP',
    restMethodType: 'طريقة REST',
    sampleRequest: 'طلب نموذجي (مع {{emailto}} و{{emailsubject}} و{{emailcontent}} أو {{phoneto}} و{{messagecontent}})',
    passwordSet: 'كلمة المرور محفوظة',
    create: 'احفظ الإعداد',
    ok: 'متاح',
    notOk: 'غير متاح',
  },
};

type Values = Record<string, string | number | boolean>;

const NEW_VALUES: Record<Channel, Values> = {
  EMAIL: { transport: 'SMTP', configName: '', smtpUseTls: false, smtpAllowPlain: false, restMethodType: 'POST' },
  SMS: { transport: 'REST', configName: '', smtpUseTls: false, smtpAllowPlain: false, restMethodType: 'POST' },
};

/** A stored configuration as the form's values; its passwords stay empty (write-only: left empty, they are kept). */
function valuesOf(config: ChannelConfig): Values {
  const values: Values = { ...NEW_VALUES.EMAIL, configName: config.configName, transport: config.transport };
  const stored = {
    smtpHost: config.smtpHost,
    smtpPort: config.smtpPort,
    smtpUsername: config.smtpUsername,
    smtpUseSsl: config.smtpUseSsl,
    smtpUseTls: config.smtpUseTls,
    smtpAllowPlain: config.smtpAllowPlain,
    serviceUrl: config.serviceUrl,
    serviceUsername: config.serviceUsername,
    soapMethodName: config.soapMethodName,
    restMethodType: config.restMethodType,
    sampleRequest: config.sampleRequest,
    ratePerSecond: config.ratePerSecond,
    burst: config.burst,
  };
  for (const [key, value] of Object.entries(stored)) if (value !== null && value !== undefined) values[key] = value;
  return values;
}

/** The body of a POST or PUT: the transport's fields that are filled in, and the rate limit. */
function bodyOf(values: Values, editing: boolean): Record<string, unknown> {
  const smtp = values.transport === 'SMTP';
  const body: Record<string, unknown> = { configName: String(values.configName).trim(), transport: values.transport };
  const keep = smtp
    ? ['smtpHost', 'smtpPort', 'smtpUsername', 'smtpPassword', 'smtpUseSsl', 'smtpUseTls', 'smtpAllowPlain']
    : ['serviceUrl', 'serviceUsername', 'servicePassword', 'sampleRequest', values.transport === 'SOAP' ? 'soapMethodName' : 'restMethodType'];
  for (const key of keep) if (values[key] !== undefined && values[key] !== '') body[key] = key === 'smtpPort' ? Number(values[key]) : values[key];
  // An empty rate field is no limit: a PUT replaces the configuration, so an edit says null; a new one leaves it out.
  for (const key of ['ratePerSecond', 'burst']) {
    const value = values[key] === undefined || values[key] === '' ? null : Number(values[key]);
    if (value !== null || editing) body[key] = value;
  }
  return body;
}

/** A new configuration, or (`editing`) a stored one replaced by PUT; its passwords are never shown, and kept when left empty. */
function ConfigForm({ channel, editing, onDone }: { channel: Channel; editing?: ChannelConfig; onDone: () => void }) {
  const { words, common } = useLocalised(WORDS);
  const queries = useQueryClient();
  const [values, setValues] = useState<Values>(() => (editing ? valuesOf(editing) : NEW_VALUES[channel]));
  const set = (key: string) => (event: { currentTarget: { value: string } }) => setValues({ ...values, [key]: event.currentTarget.value });
  const text = (key: string) => (values[key] === undefined ? '' : String(values[key]));
  const smtp = values.transport === 'SMTP';
  const save = useMutation({
    mutationFn: async () => {
      const body = bodyOf(values, editing !== undefined) as never;
      return editing
        ? dataOr(await api.PUT(`${PATHS[channel]}/{id}` as '/api/settings/email/{id}', { params: { path: { id: editing.id } }, body }))
        : dataOr(await api.POST(PATHS[channel], { body }));
    },
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['channel-configs', channel] });
      if (editing) onDone();
    },
  });
  const error = (field: string) => fieldError(save.error, field);
  const kept = (hasPassword: boolean | undefined) => (editing && hasPassword ? words.passwordKept : undefined);
  return (
    <Stack gap="xs">
      <Title order={4}>{editing ? fill(words.editOf, { name: editing.configName }) : words.add}</Title>
      <Group align="start">
        <TextInput label={words.name} value={text('configName')} onChange={set('configName')} error={error('configName')} />
        <NativeSelect
          label={words.transport}
          data={channel === 'EMAIL' ? ['SMTP', 'SOAP', 'REST'] : ['SOAP', 'REST']}
          value={String(values.transport)}
          onChange={set('transport')}
        />
      </Group>
      {smtp ? (
        <Group align="start">
          <TextInput label={words.smtpHost} value={text('smtpHost')} onChange={set('smtpHost')} error={error('smtpHost')} dir="ltr" />
          <NumberInput
            label={words.smtpPort}
            value={text('smtpPort')}
            onChange={(value) => setValues({ ...values, smtpPort: value })}
            error={error('smtpPort')}
            min={1}
            max={65535}
            w={120}
          />
          <TextInput label={words.smtpUsername} value={text('smtpUsername')} onChange={set('smtpUsername')} dir="ltr" />
          {/* Uncontrolled on purpose: a controlled input writes what is typed into the page's markup too. */}
          <PasswordInput
            label={words.smtpPassword}
            description={kept(editing?.hasSmtpPassword)}
            descriptionProps={READABLE_DESCRIPTION}
            onChange={set('smtpPassword')}
            autoComplete="new-password"
            dir="ltr"
          />
          <Checkbox
            label={words.smtpUseTls}
            checked={Boolean(values.smtpUseTls)}
            onChange={(event) => setValues({ ...values, smtpUseTls: event.currentTarget.checked })}
            mt={30}
          />
          <Checkbox
            label={words.smtpAllowPlain}
            checked={Boolean(values.smtpAllowPlain)}
            onChange={(event) => setValues({ ...values, smtpAllowPlain: event.currentTarget.checked })}
            mt={30}
          />
        </Group>
      ) : (
        <Stack gap="xs">
          <Group align="start">
            <TextInput label={words.serviceUrl} value={text('serviceUrl')} onChange={set('serviceUrl')} error={error('serviceUrl')} dir="ltr" w={360} />
            <TextInput label={words.serviceUsername} value={text('serviceUsername')} onChange={set('serviceUsername')} dir="ltr" />
            <PasswordInput
              label={words.servicePassword}
              description={kept(editing?.hasServicePassword)}
              descriptionProps={READABLE_DESCRIPTION}
              onChange={set('servicePassword')}
              autoComplete="new-password"
              dir="ltr"
            />
            {values.transport === 'SOAP' ? (
              <TextInput
                label={words.soapMethodName}
                value={text('soapMethodName')}
                onChange={set('soapMethodName')}
                error={error('soapMethodName')}
                dir="ltr"
              />
            ) : (
              <NativeSelect
                label={words.restMethodType}
                data={['POST', 'PUT', 'PATCH', 'GET']}
                value={String(values.restMethodType)}
                onChange={set('restMethodType')}
              />
            )}
          </Group>
          <Textarea
            label={words.sampleRequest}
            value={text('sampleRequest')}
            onChange={set('sampleRequest')}
            error={error('sampleRequest')}
            autosize
            minRows={3}
            ff="monospace"
            dir="ltr"
          />
        </Stack>
      )}
      <Group align="start">
        <NumberInput
          label={words.ratePerSecond}
          description={words.rateHint}
          descriptionProps={READABLE_DESCRIPTION}
          value={text('ratePerSecond')}
          onChange={(value) => setValues({ ...values, ratePerSecond: value })}
          error={error('ratePerSecond')}
          min={0.1}
          max={10000}
          decimalScale={3}
          w={280}
        />
        <NumberInput
          label={words.burst}
          description={words.burstHint}
          descriptionProps={READABLE_DESCRIPTION}
          value={text('burst')}
          onChange={(value) => setValues({ ...values, burst: value })}
          error={error('burst')}
          min={1}
          max={10000}
          allowDecimal={false}
          w={280}
        />
      </Group>
      {save.error && <ProblemAlert error={save.error} />}
      <Group>
        <ActionButton action={save}>{words.create}</ActionButton>
        {editing && (
          <Button variant="default" onClick={onDone}>
            {common.cancel}
          </Button>
        )}
      </Group>
    </Stack>
  );
}

function Configs({ channel }: { channel: Channel }) {
  const { words, common } = useLocalised(WORDS);
  const queries = useQueryClient();
  const configs = useQuery({
    queryKey: ['channel-configs', channel],
    queryFn: async () => dataOr(await api.GET(PATHS[channel], { params: { query: { limit: 100 } } })),
  });
  const rows: ChannelConfig[] = configs.data?.items ?? [];
  const [editing, setEditing] = useState<ChannelConfig | null>(null);
  const [validated, setValidated] = useState<Record<string, { ok: boolean; detail: string; latencyMs: number }>>({});
  const validate = useMutation({
    mutationFn: async (configId: string) => ({
      configId,
      answer: dataOr(await api.POST('/api/settings/communication/validate', { body: { channel, configId } })),
    }),
    onSuccess: ({ configId, answer }) => setValidated((before) => ({ ...before, [configId]: answer })),
  });
  const activate = useMutation({
    mutationFn: async (id: string) =>
      dataOr(await api.POST(`${PATHS[channel]}/{id}/activate` as '/api/settings/email/{id}/activate', { params: { path: { id } } })),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['channel-configs', channel] }),
  });
  // "Activate" makes a configuration the only active one; "Add to the order" keeps the others and tries it last.
  const setOrder = useSetOrder(channel);
  const addToOrder = (id: string) => setOrder.mutate([...activeInOrder(rows).map((config) => config.id), id]);
  // A new order is made from the list shown: not while that list is being changed or read again.
  const busy = configs.isFetching || activate.isPending || setOrder.isPending;
  return (
    <Section title={channel === 'EMAIL' ? words.email : words.sms}>
      {configs.error && <ProblemAlert error={configs.error} />}
      {validate.error && <ProblemAlert error={validate.error} />}
      {activate.error && <ProblemAlert error={activate.error} />}
      {setOrder.error && <ProblemAlert error={setOrder.error} />}
      <DataTable
        label={channel === 'EMAIL' ? words.email : words.sms}
        rows={rows}
        rowKey={(config) => config.id}
        columns={[
          {
            header: words.name,
            cell: (config) => (
              <>
                {config.configName}
                {(config.hasSmtpPassword || config.hasServicePassword) && (
                  <Text size="xs" c="gray.7">
                    {words.passwordSet}
                  </Text>
                )}
              </>
            ),
          },
          {
            header: words.transport,
            cell: (config) =>
              `${config.transport} ${config.smtpHost ? `· ${config.smtpHost}:${config.smtpPort}` : config.serviceUrl ? `· ${config.serviceUrl}` : ''}`,
          },
          { header: words.rateLimit, cell: (config) => <RateLimit config={config} /> },
          { header: common.status, cell: (config) => (config.isActive ? <StatusBadge status="ACTIVE" /> : '—') },
          {
            header: '',
            label: words.validate,
            cell: (config) => (
              <>
                <Group gap="xs">
                  <Button size="compact-sm" variant="light" onClick={() => validate.mutate(config.id)} aria-label={`${words.validate} ${config.configName}`}>
                    {words.validate}
                  </Button>
                  <Button size="compact-sm" variant="default" onClick={() => setEditing(config)} aria-label={fill(words.editOf, { name: config.configName })}>
                    {words.edit}
                  </Button>
                  {!config.isActive && (
                    <>
                      <Button
                        size="compact-sm"
                        variant="default"
                        onClick={() => activate.mutate(config.id)}
                        aria-label={`${words.activate} ${config.configName}`}
                      >
                        {words.activate}
                      </Button>
                      <Button
                        size="compact-sm"
                        variant="default"
                        disabled={busy}
                        onClick={() => addToOrder(config.id)}
                        aria-label={fill(words.addToOrderOf, { name: config.configName })}
                      >
                        {words.addToOrder}
                      </Button>
                    </>
                  )}
                </Group>
                {validated[config.id] && (
                  <Text size="xs" c={validated[config.id].ok ? 'teal.9' : 'red.9'} data-testid="validated">
                    {validated[config.id].ok ? words.ok : words.notOk}: {validated[config.id].detail} ({validated[config.id].latencyMs} ms)
                  </Text>
                )}
              </>
            ),
          },
        ]}
      />
      <ChannelOrder channel={channel} configs={rows} busy={busy} onOrder={(ids) => setOrder.mutate(ids)} />
      <ConfigForm key={editing?.id ?? 'new'} channel={channel} editing={editing ?? undefined} onDone={() => setEditing(null)} />
    </Section>
  );
}

/**
 * The organisation's gateways: SMTP, SOAP or REST for email, SOAP or REST for SMS; validate, activate or put
 * several in order, each with its rate limit; passwords write-only. Then each site's status callback.
 */
export function ChannelsScreen() {
  const words = useWords(WORDS);
  return (
    <Stack>
      <Title order={2}>{words.heading}</Title>
      <Configs channel="EMAIL" />
      <Configs channel="SMS" />
      <StatusCallbacks />
    </Stack>
  );
}
