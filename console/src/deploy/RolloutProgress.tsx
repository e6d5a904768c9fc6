import { ReactNode } from 'react';
import { Group, List, Text } from '@mantine/core';
import { fill, useTime, useWords } from '../i18n';
import { DataTable } from '../ui/DataTable';
import { Section, StatusBadge } from '../ui/bits';
import type { Deployment } from './deployment';
import { RolloutActions } from './RolloutActions';

const WORDS = {
  en: {
    heading: 'Rollout progress',
    plan: 'Steps {steps} (% of requests), {pause} s between steps',
    starting: 'Starting the new version beside the current one: it takes no requests yet.',
    step: 'Step {step} of {total}: {weight}% of requests to the new version',
    promoted: 'Promoted: the new version takes every request.',
    verdict: 'Verdict',
    judged: 'judged {when}',
    reasons: 'Reasons',
    figures: 'Canary figures',
    version: 'Version',
    canary: 'New version (canary)',
    stable: 'Current version (stable)',
    thresholds: 'Thresholds',
    requests: 'Requests',
    errors5xx: '5xx',
    errorRate: 'Error rate',
    p99: 'p99 (ms)',
    healthyHosts: 'Healthy hosts',
    atLeast: 'at least {value}',
    atMost: 'at most {value}',
    notJudged: 'not judged',
    allHosts: 'all',
  },
  ar: {
    heading: 'تقدّم النشر التدريجي',
    plan: 'الخطوات {steps} (% من الطلبات)، {pause} ث بين الخطوات',
    starting: 'تبدأ النسخة الجديدة بجانب الحالية: لا تتلقى طلبات بعد.',
    step: 'الخطوة {step} من {total}: {weight}% من الطلبات إلى النسخة الجديدة',
    promoted: 'اعتُمدت النسخة الجديدة: تتلقى كل الطلبات.',
    verdict: 'الحكم',
    judged: 'قُيّمت {when}',
    reasons: 'الأسباب',
    figures: 'أرقام النشر التدريجي',
    version: 'النسخة',
    canary: 'النسخة الجديدة (كناري)',
    stable: 'النسخة الحالية (مستقرة)',
    thresholds: 'الحدود',
    requests: 'الطلبات',
    errors5xx: '5xx',
    errorRate: 'نسبة الأخطاء',
    p99: 'p99 (مللي ثانية)',
    healthyHosts: 'المضيفات السليمة',
    atLeast: '{value} على الأقل',
    atMost: '{value} على الأكثر',
    notJudged: 'لا يُقيَّم',
    allHosts: 'كلها',
  },
};

type Rollout = NonNullable<Deployment['rollout']>;
type RolloutState = Deployment['rolloutState'];
type Figures = NonNullable<NonNullable<RolloutState>['canary']>;

/** A figure past its threshold: red and bold, so it stands out without its colour too. */
function Beyond({ over, children }: { over: boolean; children: ReactNode }) {
  return over ? (
    <Text span c="red.9" fw={700} inherit>
      {children}
    </Text>
  ) : (
    children
  );
}

interface FigureRow {
  key: string;
  version: string;
  requests: ReactNode;
  errors5xx: ReactNode;
  errorRate: ReactNode;
  p99: ReactNode;
  hosts: ReactNode;
}

/** One version's figures as a row; the canary's are set against the plan's thresholds. */
function figuresRow(key: string, version: string, figures: Figures | null, plan?: Rollout): FigureRow {
  if (!figures) return { key, version, requests: '—', errors5xx: '—', errorRate: '—', p99: '—', hosts: '—' };
  const maxP99 = plan?.maxP99Ms ?? null;
  return {
    key,
    version,
    requests: figures.requests,
    errors5xx: figures.errors5xx,
    errorRate: <Beyond over={!!plan && figures.errorRate > plan.maxErrorRate}>{figures.errorRate.toFixed(3)}</Beyond>,
    p99: figures.p99Ms === null ? '—' : <Beyond over={maxP99 !== null && figures.p99Ms > maxP99}>{Math.round(figures.p99Ms)}</Beyond>,
    hosts: <Beyond over={!!plan && figures.healthyHosts < figures.hosts}>{`${figures.healthyHosts} / ${figures.hosts}`}</Beyond>,
  };
}

/** The two versions' figures over the step last judged, and the thresholds the new one is judged against. */
function FiguresTable({ rollout, state }: { rollout: Rollout; state: RolloutState }) {
  const words = useWords(WORDS);
  const maxP99 = rollout.maxP99Ms ?? null;
  const thresholds: FigureRow = {
    key: 'thresholds',
    version: words.thresholds,
    requests: fill(words.atLeast, { value: rollout.minRequests }),
    errors5xx: '—',
    errorRate: fill(words.atMost, { value: rollout.maxErrorRate }),
    p99: maxP99 === null ? words.notJudged : fill(words.atMost, { value: maxP99 }),
    hosts: words.allHosts,
  };
  return (
    <DataTable
      label={words.figures}
      rowKey={(row) => row.key}
      rows={[figuresRow('canary', words.canary, state?.canary ?? null, rollout), figuresRow('stable', words.stable, state?.stable ?? null), thresholds]}
      columns={[
        { header: words.version, cell: (row) => row.version },
        { header: words.requests, cell: (row) => row.requests, ltr: true },
        { header: words.errors5xx, cell: (row) => row.errors5xx, ltr: true },
        { header: words.errorRate, cell: (row) => row.errorRate, ltr: true },
        { header: words.p99, cell: (row) => row.p99, ltr: true },
        { header: words.healthyHosts, cell: (row) => row.hosts, ltr: true },
      ]}
    />
  );
}

/** Where a rollout stands: its step and share, its last verdict and why, the figures, and (while a step runs) promote and abort. */
export function RolloutProgress({ deployment }: { deployment: Deployment }) {
  const words = useWords(WORDS);
  const time = useTime();
  const { rollout, rolloutState: state } = deployment;
  if (!rollout) return null;
  const where =
    state?.verdict === 'PROMOTED'
      ? words.promoted
      : !state || state.step < 0
        ? words.starting
        : fill(words.step, { step: state.step + 1, total: rollout.steps.length, weight: state.weight });
  return (
    <Section title={words.heading} gap="xs">
      <Text size="sm" data-testid="rollout-step">
        {where}
      </Text>
      <Text size="sm" c="gray.7">
        {fill(words.plan, { steps: rollout.steps.join(', '), pause: rollout.pauseSeconds })}
      </Text>
      {state?.verdict && (
        <Group gap="xs" data-testid="rollout-verdict">
          <Text size="sm" fw={500}>
            {words.verdict}
          </Text>
          <StatusBadge status={state.verdict} />
          <Text size="sm" c="gray.7">
            {fill(words.judged, { when: time(state.at) })}
          </Text>
        </Group>
      )}
      {state && state.reasons.length > 0 && (
        <List size="sm" aria-label={words.reasons} data-testid="rollout-reasons">
          {state.reasons.map((reason) => (
            <List.Item key={reason}>{reason}</List.Item>
          ))}
        </List>
      )}
      <FiguresTable rollout={rollout} state={state} />
      <RolloutActions
        serviceName={deployment.serviceName}
        deploymentId={deployment.deploymentId}
        open={deployment.status === 'DEPLOYING' && deployment.stage === 'CANARY'}
      />
    </Section>
  );
}
