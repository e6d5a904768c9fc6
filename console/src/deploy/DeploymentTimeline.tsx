import { Alert, Code, Stack, Stepper, Text } from '@mantine/core';
import { useTime, useWords } from '../i18n';
import { Link } from '../router';
import { StatusBadge, TemporalLink } from '../ui/bits';
import { ProblemAlert } from '../ui/ProblemAlert';
import { Deployment, useDeployment } from './deployment';
import { RolloutProgress } from './RolloutProgress';

/**
 * A deploy's stages in the order the deploy workflow runs them (an image deploy builds nothing, so it skips
 * BUILDING_IMAGE); a deploy with a rollout runs its canary steps between the health check and the switch.
 */
const STAGES = ['VALIDATED', 'BUILDING_IMAGE', 'STARTING', 'HEALTH_CHECK', 'REGISTERING', 'RUNNING'];
const ROLLOUT_STAGES = ['VALIDATED', 'BUILDING_IMAGE', 'STARTING', 'HEALTH_CHECK', 'CANARY', 'REGISTERING', 'RUNNING'];

const WORDS = {
  en: {
    stages: 'Deploy stages',
    failed: 'The deploy failed at',
    reverted: 'The rollout was reverted at',
    keptServing: 'The current version kept serving; the new one was removed.',
    lastLines: 'Last log lines',
    service: 'Open the service',
  },
  ar: {
    stages: 'مراحل النشر',
    failed: 'فشل النشر في مرحلة',
    reverted: 'أُلغي النشر التدريجي في مرحلة',
    keptServing: 'بقيت النسخة الحالية تخدم الطلبات، وأُزيلت النسخة الجديدة.',
    lastLines: 'آخر أسطر السجل',
    service: 'افتح الخدمة',
  },
};

/** Why a deploy ended without running: FAILED, or REVERTED (a rollout whose canary failed or was aborted), in red either way. */
export function DeployErrorAlert({ deployment }: { deployment: Deployment }) {
  const words = useWords(WORDS);
  const error = deployment.error;
  if (!error) return null;
  const reverted = deployment.status === 'REVERTED';
  return (
    <Alert color="red" role="alert" title={`${reverted ? words.reverted : words.failed} ${error.stage}`}>
      <StatusBadge status={deployment.status} />
      <Text size="sm">{error.reason}</Text>
      {reverted && <Text size="sm">{words.keptServing}</Text>}
      {error.lastLogLines.length > 0 && (
        <>
          <Text size="sm" fw={700}>
            {words.lastLines}
          </Text>
          <Code block dir="ltr">
            {error.lastLogLines.join('\n')}
          </Code>
        </>
      )}
    </Alert>
  );
}

/** A deploy's live stage timeline, from `GET /api/infra/deployments/{id}`, until it runs, fails or is reverted. */
export function DeploymentTimeline({ deploymentId, uiUrl }: { deploymentId: string; uiUrl: string }) {
  const words = useWords(WORDS);
  const time = useTime();
  const deployment = useDeployment(deploymentId);
  if (deployment.error) return <ProblemAlert error={deployment.error} />;
  const data = deployment.data;
  const stages = data?.rollout ? ROLLOUT_STAGES : STAGES;
  const reached = new Map((data?.events ?? []).map((event) => [event.stage, event]));
  const failedAt = data?.error?.stage;
  const active = failedAt
    ? stages.indexOf(failedAt)
    : Math.max(...stages.map((stage, index) => (reached.has(stage) ? index : -1))) + (data?.status === 'RUNNING' ? 1 : 0);
  return (
    <Stack gap="sm" aria-label={words.stages} data-testid="deploy-timeline" data-status={data?.status ?? ''}>
      <Stepper active={Math.max(active, 0)} size="sm" orientation="vertical">
        {stages.map((stage) => (
          <Stepper.Step
            key={stage}
            label={stage}
            color={failedAt === stage ? 'red' : undefined}
            description={reached.get(stage) ? `${time(reached.get(stage)!.at)} · ${reached.get(stage)!.message}` : undefined}
          />
        ))}
      </Stepper>
      {data?.rollout && <RolloutProgress deployment={data} />}
      <TemporalLink uiUrl={uiUrl} />
      {(data?.status === 'RUNNING' || data?.status === 'REVERTED') && <Link to={`/services/${encodeURIComponent(data.serviceName)}`}>{words.service}</Link>}
      {data && <DeployErrorAlert deployment={data} />}
    </Stack>
  );
}
