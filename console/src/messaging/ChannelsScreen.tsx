import { useState } from 'react';
import { Button, Checkbox, Group, NativeSelect, NumberInput, PasswordInput, Stack, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, dataOr } from '../api/client';
import { useLocalised, useWords } from '../i18n';
import { Section, StatusBadge, ActionButton } from '../ui/bits';
import { DataTable } from '../ui/DataTable';
import { fieldError, ProblemAlert } from '../ui/ProblemAlert';

type Channel = 'EMAIL' | 'SMS';
const PATHS = { EMAIL: '/api/settings/email', SMS: '/api/settings/sms' } as const;

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

function ConfigForm({ channel }: { channel: Channel }) {
  const words = useWords(WORDS);
  const queries = useQueryClient();
  const [values, setValues] = useState<Record<string, string | number | boolean>>({
    transport: channel === 'EMAIL' ? 'SMTP' : 'REST',
    configName: '',
    smtpUseTls: false,
    smtpAllowPlain: false,
    restMethodType: 'POST',
  });
  const set = (key: string) => (event: { currentTarget: { value: string } }) => setValues({ ...values, [key]: event.currentTarget.value });
  const smtp = values.transport === 'SMTP';
  const create = useMutation({
    mutationFn: async () => {
      const body: Record<string, unknown> = { configName: String(values.configName).trim(), transport: values.transport };
      const keep = smtp
        ? ['smtpHost', 'smtpPort', 'smtpUsername', 'smtpPassword', 'smtpUseTls', 'smtpAllowPlain']
        : ['serviceUrl', 'serviceUsername', 'servicePassword', 'sampleRequest', values.transport === 'SOAP' ? 'soapMethodName' : 'restMethodType'];
      for (const key of keep) if (values[key] !== undefined && values[key] !== '') body[key] = key === 'smtpPort' ? Number(values[key]) : values[key];
      return dataOr(await api.POST(PATHS[channel], { body: body as never }));
    },
    onSuccess: () => queries.invalidateQueries({ queryKey: ['channel-configs', channel] }),
  });
  const error = (field: string) => fieldError(create.error, field);
  return (
    <Stack gap="xs">
      <Title order={4}>{words.add}</Title>
      <Group align="start">
        <TextInput label={words.name} value={String(values.configName)} onChange={set('configName')} error={error('configName')} />
        <NativeSelect
          label={words.transport}
          data={channel === 'EMAIL' ? ['SMTP', 'SOAP', 'REST'] : ['SOAP', 'REST']}
          value={String(values.transport)}
          onChange={set('transport')}
        />
      </Group>
      {smtp ? (
        <Group align="start">
          <TextInput label={words.smtpHost} onChange={set('smtpHost')} error={error('smtpHost')} dir="ltr" />
          <NumberInput
            label={words.smtpPort}
            onChange={(value) => setValues({ ...values, smtpPort: value })}
            error={error('smtpPort')}
            min={1}
            max={65535}
            w={120}
          />
          <TextInput label={words.smtpUsername} onChange={set('smtpUsername')} dir="ltr" />
          <PasswordInput label={words.smtpPassword} onChange={set('smtpPassword')} autoComplete="new-password" dir="ltr" />
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
            <TextInput label={words.serviceUrl} onChange={set('serviceUrl')} error={error('serviceUrl')} dir="ltr" w={360} />
            <TextInput label={words.serviceUsername} onChange={set('serviceUsername')} dir="ltr" />
            <PasswordInput label={words.servicePassword} onChange={set('servicePassword')} autoComplete="new-password" dir="ltr" />
            {values.transport === 'SOAP' ? (
              <TextInput label={words.soapMethodName} onChange={set('soapMethodName')} error={error('soapMethodName')} dir="ltr" />
            ) : (
              <NativeSelect
                label={words.restMethodType}
                data={['POST', 'PUT', 'PATCH', 'GET']}
                value={String(values.restMethodType)}
                onChange={set('restMethodType')}
              />
            )}
          </Group>
          <Textarea label={words.sampleRequest} onChange={set('sampleRequest')} error={error('sampleRequest')} autosize minRows={3} ff="monospace" dir="ltr" />
        </Stack>
      )}
      {create.error && <ProblemAlert error={create.error} />}
      <Group>
        <ActionButton action={create}>{words.create}</ActionButton>
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
  return (
    <Section title={channel === 'EMAIL' ? words.email : words.sms}>
      {configs.error && <ProblemAlert error={configs.error} />}
      {validate.error && <ProblemAlert error={validate.error} />}
      {activate.error && <ProblemAlert error={activate.error} />}
      <DataTable
        label={channel === 'EMAIL' ? words.email : words.sms}
        rows={configs.data?.items ?? []}
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
                  {!config.isActive && (
                    <Button
                      size="compact-sm"
                      variant="default"
                      onClick={() => activate.mutate(config.id)}
                      aria-label={`${words.activate} ${config.configName}`}
                    >
                      {words.activate}
                    </Button>
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
      <ConfigForm channel={channel} />
    </Section>
  );
}

/** The organisation's gateways: SMTP, SOAP or REST for email, SOAP or REST for SMS; validate, activate, passwords write-only. */
export function ChannelsScreen() {
  const words = useWords(WORDS);
  return (
    <Stack>
      <Title order={2}>{words.heading}</Title>
      <Configs channel="EMAIL" />
      <Configs channel="SMS" />
    </Stack>
  );
}
