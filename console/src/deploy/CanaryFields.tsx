import { NumberInput, Paper, Stack, Switch, Text, TextInput } from '@mantine/core';
import type { paths } from '../api/schema';
import { useWords } from '../i18n';
import { READABLE_DESCRIPTION } from '../ui/bits';

const WORDS = {
  en: {
    canary: 'Canary rollout',
    explain:
      'The new version takes a growing share of requests, step by step. After each pause the step is judged on its 5xx rate and p99; a failing step sends every request back to the current version.',
    steps: 'Steps (% of requests)',
    stepsHint: 'Ascending, ending at 100: for example 10, 50, 100',
    stepsInvalid: 'Whole percentages separated by commas',
    pause: 'Pause between steps (seconds)',
    maxErrorRate: 'Max error rate (0 to 1)',
    maxErrorRateHint: 'The highest share of 5xx answers the new version may give: 0.02 is 2%',
    maxP99: 'Max p99 latency (ms, optional)',
    maxP99Hint: 'Left empty, latency is not judged',
    minRequests: 'Min requests per step',
    minRequestsHint: 'A step is judged once the new version has answered this many requests in it',
  },
  ar: {
    canary: 'نشر تدريجي (كناري)',
    explain:
      'تتلقى النسخة الجديدة حصة متزايدة من الطلبات خطوة بعد خطوة. بعد كل انتظار تُقيَّم الخطوة بنسبة أخطاء 5xx وزمن p99؛ والخطوة الفاشلة تعيد كل الطلبات إلى النسخة الحالية.',
    steps: 'الخطوات (% من الطلبات)',
    stepsHint: 'تصاعدية وتنتهي بـ 100، مثلًا 10, 50, 100',
    stepsInvalid: 'نسب مئوية صحيحة تفصل بينها فواصل',
    pause: 'الانتظار بين الخطوات (بالثواني)',
    maxErrorRate: 'أقصى نسبة أخطاء (من 0 إلى 1)',
    maxErrorRateHint: 'أعلى حصة من إجابات 5xx يُسمح بها للنسخة الجديدة: 0.02 تعني 2%',
    maxP99: 'أقصى زمن p99 (بالمللي ثانية، اختياري)',
    maxP99Hint: 'إن تُرك فارغًا لا يُقيَّم زمن الاستجابة',
    minRequests: 'أدنى عدد من الطلبات لكل خطوة',
    minRequestsHint: 'تُقيَّم الخطوة بعد أن تجيب النسخة الجديدة عن هذا العدد من الطلبات فيها',
  },
};

/** A rollout as the deploy routes take it (the JAR form sends it as JSON, the image form as an object). */
export type Rollout = NonNullable<paths['/api/infra/deploy']['post']['requestBody']['content']['application/json']['rollout']>;

/** The canary section as typed: numbers as the inputs hold them ('' when blank), the steps as text. */
export interface CanaryDraft {
  enabled: boolean;
  steps: string;
  pauseSeconds: string | number;
  maxErrorRate: string | number;
  maxP99Ms: string | number;
  minRequests: string | number;
}

export const CANARY_DEFAULTS: CanaryDraft = { enabled: false, steps: '10, 50, 100', pauseSeconds: 60, maxErrorRate: 0.02, maxP99Ms: '', minRequests: 50 };

/** "10, 50, 100" as [10, 50, 100]; null when blank or a part is not a whole number. Whether they ascend to 100 is the API's to say. */
export function parseSteps(text: string): number[] | null {
  const parts = text.split(/[\s,]+/).filter((part) => part !== '');
  return parts.length > 0 && parts.every((part) => /^\d{1,3}$/.test(part)) ? parts.map(Number) : null;
}

const numberOr = (value: string | number) => (value === '' ? null : Number(value));

/**
 * The rollout the section asks for: undefined when it is off; null when it cannot be sent yet (steps that
 * are not numbers, a required figure left blank), so the form holds its Deploy button back.
 */
export function rolloutOf(draft: CanaryDraft): Rollout | null | undefined {
  if (!draft.enabled) return undefined;
  const steps = parseSteps(draft.steps);
  const pauseSeconds = numberOr(draft.pauseSeconds);
  const maxErrorRate = numberOr(draft.maxErrorRate);
  const minRequests = numberOr(draft.minRequests);
  if (!steps || pauseSeconds === null || maxErrorRate === null || minRequests === null) return null;
  const maxP99Ms = numberOr(draft.maxP99Ms);
  return { steps, pauseSeconds, maxErrorRate, minRequests, ...(maxP99Ms === null ? {} : { maxP99Ms }) };
}

/** A redeploy's optional canary rollout: a switch, then its steps and thresholds with the defaults filled in. */
export function CanaryFields({ draft, onChange }: { draft: CanaryDraft; onChange: (draft: CanaryDraft) => void }) {
  const words = useWords(WORDS);
  const set = (change: Partial<CanaryDraft>) => onChange({ ...draft, ...change });
  return (
    <Paper withBorder p="sm">
      <Stack gap="xs">
        <Switch label={words.canary} checked={draft.enabled} onChange={(event) => set({ enabled: event.currentTarget.checked })} />
        <Text size="sm" c="gray.7">
          {words.explain}
        </Text>
        {draft.enabled && (
          <>
            <TextInput
              label={words.steps}
              description={words.stepsHint}
              descriptionProps={READABLE_DESCRIPTION}
              value={draft.steps}
              onChange={(event) => set({ steps: event.currentTarget.value })}
              error={parseSteps(draft.steps) === null ? words.stepsInvalid : undefined}
              required
              dir="ltr"
            />
            <NumberInput
              label={words.pause}
              value={draft.pauseSeconds}
              onChange={(pauseSeconds) => set({ pauseSeconds })}
              min={1}
              max={3600}
              allowDecimal={false}
              required
            />
            <NumberInput
              label={words.maxErrorRate}
              description={words.maxErrorRateHint}
              descriptionProps={READABLE_DESCRIPTION}
              value={draft.maxErrorRate}
              onChange={(maxErrorRate) => set({ maxErrorRate })}
              min={0}
              max={1}
              step={0.01}
              decimalScale={4}
              required
            />
            <NumberInput
              label={words.maxP99}
              description={words.maxP99Hint}
              descriptionProps={READABLE_DESCRIPTION}
              value={draft.maxP99Ms}
              onChange={(maxP99Ms) => set({ maxP99Ms })}
              min={1}
              max={600000}
              allowDecimal={false}
            />
            <NumberInput
              label={words.minRequests}
              description={words.minRequestsHint}
              descriptionProps={READABLE_DESCRIPTION}
              value={draft.minRequests}
              onChange={(minRequests) => set({ minRequests })}
              min={0}
              max={1000000}
              allowDecimal={false}
              required
            />
          </>
        )}
      </Stack>
    </Paper>
  );
}
