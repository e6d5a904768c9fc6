import { useState } from 'react';
import { ActionIcon, Button, Group, NumberInput, PasswordInput, Stack, Tabs, Text, Textarea, TextInput, Title } from '@mantine/core';
import { Dropzone } from '@mantine/dropzone';
import { useMutation } from '@tanstack/react-query';
import { api, authorizedFetch, dataOr, problemOf } from '../api/client';
import { useWords } from '../i18n';
import { WarningAlert, ActionButton } from '../ui/bits';
import { ProblemAlert } from '../ui/ProblemAlert';
import { CANARY_DEFAULTS, CanaryDraft, CanaryFields, rolloutOf } from './CanaryFields';
import { DeploymentTimeline } from './DeploymentTimeline';

const WORDS = {
  en: {
    heading: 'Deploy Service',
    jar: 'From a JAR',
    image: 'From an image',
    drop: 'Drop the JAR here, or click to choose it',
    chosen: 'Chosen',
    serviceName: 'Service name',
    port: 'Port',
    group: 'Dashboard Group',
    healthPath: 'Health path',
    env: 'Environment variables',
    envName: 'Name',
    envValue: 'Value',
    addEnv: 'Add a variable',
    removeEnv: 'Remove this variable',
    deploy: 'Deploy',
    redeploy: 'Replace the running service (redeploy)',
    imageRef: 'Image',
    hostPort: 'Host port (optional)',
    hostPortWarning: 'A host port publishes the service on the machine: requests there bypass the gateway and its X-User-* identity.',
    description: 'Description',
    fromJar: 'from the JAR',
    springDefault: "Spring Boot's default",
  },
  ar: {
    heading: 'نشر خدمة',
    jar: 'من ملف JAR',
    image: 'من صورة',
    drop: 'أفلت ملف JAR هنا أو انقر لاختياره',
    chosen: 'المختار',
    serviceName: 'اسم الخدمة',
    port: 'المنفذ',
    group: 'مجموعة لوحة التحكم',
    healthPath: 'مسار فحص الصحة',
    env: 'متغيرات البيئة',
    envName: 'الاسم',
    envValue: 'القيمة',
    addEnv: 'أضف متغيرًا',
    removeEnv: 'احذف هذا المتغير',
    deploy: 'انشر',
    redeploy: 'استبدل الخدمة العاملة (إعادة نشر)',
    imageRef: 'الصورة',
    hostPort: 'منفذ المضيف (اختياري)',
    hostPortWarning: 'منفذ المضيف ينشر الخدمة على الجهاز: الطلبات هناك تتجاوز البوابة وهوية X-User-*.',
    description: 'الوصف',
    fromJar: 'من ملف JAR',
    springDefault: 'الافتراضي في Spring Boot',
  },
};

interface EnvRow {
  key: number;
  name: string;
  value: string;
}

/** The redeploy switch (a pressed button), and under it, once chosen, the canary rollout section. */
function RedeployFields({
  redeploy,
  onRedeploy,
  canary,
  onCanary,
}: {
  redeploy: boolean;
  onRedeploy: (redeploy: boolean) => void;
  canary: CanaryDraft;
  onCanary: (canary: CanaryDraft) => void;
}) {
  const words = useWords(WORDS);
  return (
    <>
      <Group>
        <Button variant={redeploy ? 'filled' : 'default'} onClick={() => onRedeploy(!redeploy)} aria-pressed={redeploy}>
          {words.redeploy}
        </Button>
      </Group>
      {redeploy && <CanaryFields draft={canary} onChange={onCanary} />}
    </>
  );
}

/** Environment variable rows; values are typed masked, as secrets often are, and stay masked once saved. */
function EnvRows({ rows, onChange }: { rows: EnvRow[]; onChange: (rows: EnvRow[]) => void }) {
  const words = useWords(WORDS);
  const set = (key: number, change: Partial<EnvRow>) => onChange(rows.map((row) => (row.key === key ? { ...row, ...change } : row)));
  return (
    <Stack gap="xs">
      <Text fw={500} size="sm">
        {words.env}
      </Text>
      {rows.map((row, index) => (
        <Group key={row.key} align="end">
          <TextInput
            label={`${words.envName} ${index + 1}`}
            value={row.name}
            onChange={(event) => set(row.key, { name: event.currentTarget.value })}
            dir="ltr"
          />
          <PasswordInput
            label={`${words.envValue} ${index + 1}`}
            value={row.value}
            onChange={(event) => set(row.key, { value: event.currentTarget.value })}
            dir="ltr"
            w={260}
          />
          <ActionIcon
            variant="subtle"
            color="red"
            aria-label={`${words.removeEnv} ${index + 1}`}
            onClick={() => onChange(rows.filter((other) => other.key !== row.key))}
            mb={4}
          >
            ×
          </ActionIcon>
        </Group>
      ))}
      <Group>
        <Button variant="light" size="xs" onClick={() => onChange([...rows, { key: Date.now() + rows.length, name: '', value: '' }])}>
          {words.addEnv}
        </Button>
      </Group>
    </Stack>
  );
}

const envOf = (rows: EnvRow[]) => Object.fromEntries(rows.filter((row) => row.name.trim() !== '').map((row) => [row.name.trim(), row.value]));

interface Started {
  deploymentId: string;
  uiUrl: string;
  warnings?: string[];
}

function JarForm({ onStarted }: { onStarted: (started: Started) => void }) {
  const words = useWords(WORDS);
  const [file, setFile] = useState<File | null>(null);
  const [serviceName, setServiceName] = useState('');
  const [port, setPort] = useState<string | number>('');
  const [group, setGroup] = useState('platform');
  const [healthPath, setHealthPath] = useState('');
  const [redeploy, setRedeploy] = useState(false);
  const [canary, setCanary] = useState(CANARY_DEFAULTS);
  const [env, setEnv] = useState<EnvRow[]>([]);
  // A rollout is a redeploy's: the section is offered, and sent, only with redeploy chosen.
  const rollout = redeploy ? rolloutOf(canary) : undefined;
  // What the JAR says of itself, read by the API as a deploy would: the placeholders of name and port.
  const facts = useMutation({
    mutationFn: async (jar: File) => {
      const form = new FormData();
      form.append('file', jar);
      const response = await authorizedFetch('/api/infra/deploy/jar/inspect', { method: 'POST', body: form });
      if (!response.ok) throw await problemOf(response);
      return (await response.json()) as { serviceName: string | null; port: number; portFromJar: boolean };
    },
  });
  const deploy = useMutation({
    mutationFn: async () => {
      const form = new FormData();
      form.append('serviceName', serviceName.trim());
      form.append('port', String(port));
      form.append('group', group.trim());
      form.append('healthPath', healthPath.trim());
      form.append('redeploy', String(redeploy));
      if (rollout) form.append('rollout', JSON.stringify(rollout));
      for (const [name, value] of Object.entries(envOf(env))) form.append(`ENV_${name}`, value);
      form.append('file', file!);
      const response = await authorizedFetch('/api/infra/deploy/jar', { method: 'POST', body: form });
      if (!response.ok) throw await problemOf(response);
      return (await response.json()) as Started;
    },
    onSuccess: onStarted,
  });
  const choose = (chosen: File) => {
    setFile(chosen);
    facts.mutate(chosen);
  };
  return (
    <Stack>
      <Dropzone
        onDrop={(files) => files[0] && choose(files[0])}
        multiple={false}
        accept={{ 'application/java-archive': ['.jar'], 'application/octet-stream': ['.jar'], 'application/zip': ['.jar'] }}
        aria-label={words.drop}
      >
        <Text ta="center" py="lg">
          {file ? `${words.chosen}: ${file.name}` : words.drop}
        </Text>
      </Dropzone>
      {facts.error && <ProblemAlert error={facts.error} />}
      <TextInput
        label={words.serviceName}
        value={serviceName}
        onChange={(event) => setServiceName(event.currentTarget.value)}
        placeholder={facts.data?.serviceName ? `${facts.data.serviceName} (${words.fromJar})` : undefined}
        dir="ltr"
      />
      <NumberInput
        label={words.port}
        value={port}
        onChange={setPort}
        min={1}
        max={65535}
        placeholder={facts.data ? `${facts.data.port} (${facts.data.portFromJar ? words.fromJar : words.springDefault})` : undefined}
      />
      <TextInput label={words.group} value={group} onChange={(event) => setGroup(event.currentTarget.value)} dir="ltr" />
      <TextInput
        label={words.healthPath}
        value={healthPath}
        onChange={(event) => setHealthPath(event.currentTarget.value)}
        placeholder="/actuator/health"
        dir="ltr"
      />
      <EnvRows rows={env} onChange={setEnv} />
      <RedeployFields redeploy={redeploy} onRedeploy={setRedeploy} canary={canary} onCanary={setCanary} />
      {deploy.error && <ProblemAlert error={deploy.error} />}
      <Group>
        <ActionButton action={deploy} disabled={!file || rollout === null}>
          {words.deploy}
        </ActionButton>
      </Group>
    </Stack>
  );
}

function ImageForm({ onStarted }: { onStarted: (started: Started) => void }) {
  const words = useWords(WORDS);
  const [name, setName] = useState('');
  const [image, setImage] = useState('');
  const [port, setPort] = useState<string | number>('');
  const [hostPort, setHostPort] = useState<string | number>('');
  const [group, setGroup] = useState('platform');
  const [description, setDescription] = useState('');
  const [env, setEnv] = useState<EnvRow[]>([]);
  const [redeploy, setRedeploy] = useState(false);
  const [canary, setCanary] = useState(CANARY_DEFAULTS);
  const rollout = redeploy ? rolloutOf(canary) : undefined;
  const deploy = useMutation({
    mutationFn: async () =>
      dataOr(
        await api.POST('/api/infra/deploy', {
          body: {
            name: name.trim(),
            image: image.trim(),
            port: Number(port),
            ...(hostPort === '' ? {} : { hostPort: Number(hostPort) }),
            envVars: envOf(env),
            ...(description.trim() ? { description: description.trim() } : {}),
            group: group.trim() || 'platform',
            ...(redeploy ? { redeploy: true } : {}),
            ...(rollout ? { rollout } : {}),
          },
        }),
      ),
    onSuccess: onStarted,
  });
  return (
    <Stack>
      <TextInput label={words.serviceName} value={name} onChange={(event) => setName(event.currentTarget.value)} dir="ltr" required />
      <TextInput label={words.imageRef} value={image} onChange={(event) => setImage(event.currentTarget.value)} dir="ltr" required />
      <NumberInput label={words.port} value={port} onChange={setPort} min={1} max={65535} required />
      <NumberInput label={words.hostPort} value={hostPort} onChange={setHostPort} min={1} max={65535} />
      {hostPort !== '' && <WarningAlert title={words.hostPort}>{words.hostPortWarning}</WarningAlert>}
      <TextInput label={words.group} value={group} onChange={(event) => setGroup(event.currentTarget.value)} dir="ltr" />
      <Textarea label={words.description} value={description} onChange={(event) => setDescription(event.currentTarget.value)} />
      <EnvRows rows={env} onChange={setEnv} />
      <RedeployFields redeploy={redeploy} onRedeploy={setRedeploy} canary={canary} onCanary={setCanary} />
      {deploy.error && <ProblemAlert error={deploy.error} />}
      <Group>
        <ActionButton action={deploy} disabled={rollout === null}>
          {words.deploy}
        </ActionButton>
      </Group>
    </Stack>
  );
}

/** Infrastructure → Deploy Service: the JAR form and the image form, then the deploy's live stages. */
export function DeployScreen() {
  const words = useWords(WORDS);
  const [started, setStarted] = useState<Started | null>(null);
  return (
    <Stack maw={720}>
      <Title order={2}>{words.heading}</Title>
      <Tabs defaultValue="jar" keepMounted={false}>
        <Tabs.List>
          <Tabs.Tab value="jar">{words.jar}</Tabs.Tab>
          <Tabs.Tab value="image">{words.image}</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="jar" pt="md">
          <JarForm onStarted={setStarted} />
        </Tabs.Panel>
        <Tabs.Panel value="image" pt="md">
          <ImageForm onStarted={setStarted} />
        </Tabs.Panel>
      </Tabs>
      {started?.warnings?.map((warning) => (
        <WarningAlert key={warning}>{warning}</WarningAlert>
      ))}
      {started && <DeploymentTimeline key={started.deploymentId} deploymentId={started.deploymentId} uiUrl={started.uiUrl} />}
    </Stack>
  );
}
