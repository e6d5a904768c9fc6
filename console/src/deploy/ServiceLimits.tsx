import { useState } from 'react';
import { Button, Group, NumberInput, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, dataOr } from '../api/client';
import type { paths } from '../api/schema';
import { fill, useLocalised } from '../i18n';
import { ActionButton, Section } from '../ui/bits';
import { DataTable } from '../ui/DataTable';
import { fieldError, ProblemAlert } from '../ui/ProblemAlert';

const WORDS = {
  en: {
    heading: 'Limits',
    wanted: 'Each instance may use {memoryMb} MiB of memory, {cpus} CPU(s) and {pids} processes.',
    readBack: "Each running instance's limits as read back from the engine, not as asked for.",
    perInstance: 'Limits per instance',
    instance: 'Instance',
    memoryMb: 'Memory (MiB)',
    cpus: 'CPUs',
    pids: 'Processes',
    edit: 'Edit limits',
    changed: 'Changed: each instance below shows the new limits as the engine reports them.',
  },
  ar: {
    heading: 'الحدود',
    wanted: 'يمكن لكل نسخة أن تستخدم {memoryMb} ميبيبايت من الذاكرة و{cpus} من المعالجات و{pids} عملية.',
    readBack: 'حدود كل نسخة عاملة كما يقرؤها المحرك فعلًا، لا كما طُلبت.',
    perInstance: 'الحدود لكل نسخة',
    instance: 'النسخة',
    memoryMb: 'الذاكرة (ميبيبايت)',
    cpus: 'المعالجات',
    pids: 'العمليات',
    edit: 'عدّل الحدود',
    changed: 'تغيّرت الحدود: تظهر كل نسخة أدناه بالحدود الجديدة كما يقرؤها المحرك.',
  },
};

type LimitsAnswer = paths['/api/infra/services/{name}/limits']['get']['responses'][200]['content']['application/json'];
type Limits = LimitsAnswer['limits'];
type LimitsBody = paths['/api/infra/services/{name}/limits']['patch']['requestBody']['content']['application/json'];
type Field = keyof Limits;
type Draft = Record<Field, string | number>;

const FIELDS: Field[] = ['memoryMb', 'cpus', 'pids'];

/** The API's bounds, as LIMIT_BOUNDS in domain/deploy.ts has them (the console imports nothing from domain/). */
const BOUNDS: Record<Field, { min: number; max: number }> = {
  memoryMb: { min: 32, max: 65536 },
  cpus: { min: 0.05, max: 64 },
  pids: { min: 16, max: 65536 },
};

/** What the form sends: only the fields changed from the service's limits (a blank one is left as it was). */
function changesOf(draft: Draft, limits: Limits): LimitsBody {
  const changes: LimitsBody = {};
  for (const field of FIELDS) if (draft[field] !== '' && Number(draft[field]) !== limits[field]) changes[field] = Number(draft[field]);
  return changes;
}

/** The three limits, memory, CPUs and processes, sent with only what changed; the API's word on a field sits on its input. */
function LimitsForm({ name, limits, onSaved, onCancel }: { name: string; limits: Limits; onSaved: () => void; onCancel: () => void }) {
  const { words, common } = useLocalised(WORDS);
  const queries = useQueryClient();
  const [draft, setDraft] = useState<Draft>(limits);
  const changes = changesOf(draft, limits);
  const save = useMutation({
    mutationFn: async () => dataOr(await api.PATCH('/api/infra/services/{name}/limits', { params: { path: { name } }, body: changes })),
    onSuccess: (answer) => {
      queries.setQueryData(['service-limits', name], answer);
      void queries.invalidateQueries({ queryKey: ['service-events', name] });
      onSaved();
    },
  });
  const set = (field: Field) => (value: string | number) => setDraft({ ...draft, [field]: value });
  return (
    <>
      <Group align="start">
        <NumberInput
          label={words.memoryMb}
          value={draft.memoryMb}
          onChange={set('memoryMb')}
          min={BOUNDS.memoryMb.min}
          max={BOUNDS.memoryMb.max}
          allowDecimal={false}
          error={fieldError(save.error, 'memoryMb')}
          w={160}
        />
        <NumberInput
          label={words.cpus}
          value={draft.cpus}
          onChange={set('cpus')}
          min={BOUNDS.cpus.min}
          max={BOUNDS.cpus.max}
          step={0.05}
          decimalScale={2}
          error={fieldError(save.error, 'cpus')}
          w={160}
        />
        <NumberInput
          label={words.pids}
          value={draft.pids}
          onChange={set('pids')}
          min={BOUNDS.pids.min}
          max={BOUNDS.pids.max}
          allowDecimal={false}
          error={fieldError(save.error, 'pids')}
          w={160}
        />
      </Group>
      {save.error && !FIELDS.some((field) => fieldError(save.error, field)) && <ProblemAlert error={save.error} />}
      <Group>
        <ActionButton action={save} disabled={Object.keys(changes).length === 0}>
          {common.save}
        </ActionButton>
        <Button variant="default" onClick={onCancel}>
          {common.cancel}
        </Button>
      </Group>
    </>
  );
}

/**
 * A service's limits (`GET /api/infra/services/{name}/limits`) and each running instance's as the engine
 * reports them; Edit changes them in place (PATCH), and the answer, read back from the engine, is shown.
 */
export function ServiceLimits({ name }: { name: string }) {
  const { words, common } = useLocalised(WORDS);
  const [editing, setEditing] = useState(false);
  const [changed, setChanged] = useState(false);
  const limits = useQuery({
    queryKey: ['service-limits', name],
    queryFn: async () => dataOr(await api.GET('/api/infra/services/{name}/limits', { params: { path: { name } } })),
  });
  const data = limits.data;
  return (
    <Section title={words.heading} gap="xs" onRefresh={() => void limits.refetch()}>
      {limits.error && <ProblemAlert error={limits.error} />}
      {!data && !limits.error && <Text c="gray.7">{common.loading}</Text>}
      {data && (
        <>
          <Text size="sm">{fill(words.wanted, data.limits)}</Text>
          <Text size="sm" c="gray.7">
            {words.readBack}
          </Text>
          <DataTable
            label={words.perInstance}
            rows={data.instances}
            rowKey={(instance) => instance.id}
            columns={[
              { header: words.instance, cell: (instance) => instance.id.slice(0, 8), ltr: true },
              { header: words.memoryMb, cell: (instance) => instance.limits?.memoryMb ?? '—', ltr: true },
              { header: words.cpus, cell: (instance) => instance.limits?.cpus ?? '—', ltr: true },
              { header: words.pids, cell: (instance) => instance.limits?.pids ?? '—', ltr: true },
            ]}
          />
          {changed && !editing && <Text size="sm">{words.changed}</Text>}
          {editing ? (
            <LimitsForm
              name={name}
              limits={data.limits}
              onSaved={() => {
                setChanged(true);
                setEditing(false);
              }}
              onCancel={() => setEditing(false)}
            />
          ) : (
            <Group>
              <Button
                variant="light"
                onClick={() => {
                  setChanged(false);
                  setEditing(true);
                }}
              >
                {words.edit}
              </Button>
            </Group>
          )}
        </>
      )}
    </Section>
  );
}
