import { Alert, Code, Stack, Stepper, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, dataOr } from '../api/client';
import { useTime, useWords } from '../i18n';
import { Link } from '../router';
import { TemporalLink } from '../ui/bits';
import { ProblemAlert } from '../ui/ProblemAlert';

/** A deploy's stages in the order the deploy workflow runs them (an image deploy builds nothing, so it skips BUILDING_IMAGE). */
const STAGES = ['VALIDATED', 'BUILDING_IMAGE', 'STARTING', 'HEALTH_CHECK', 'REGISTERING', 'RUNNING'];

const WORDS = {
  en: { stages: 'Deploy stages', failed: 'The deploy failed at', lastLines: 'Last log lines', service: 'Open the service' },
  ar: { stages: 'مراحل النشر', failed: 'فشل النشر في مرحلة', lastLines: 'آخر أسطر السجل', service: 'افتح الخدمة' },
};

/** A deploy's live stage timeline, from `GET /api/infra/deployments/{id}`, until it runs or fails. */
export function DeploymentTimeline({ deploymentId, uiUrl }: { deploymentId: string; uiUrl: string }) {
  const words = useWords(WORDS);
  const time = useTime();
  const deployment = useQuery({
    queryKey: ['deployment', deploymentId],
    queryFn: async () => dataOr(await api.GET('/api/infra/deployments/{deploymentId}', { params: { path: { deploymentId } } })),
    refetchInterval: (query) => (query.state.data && ['RUNNING', 'FAILED'].includes(query.state.data.status) ? false : 1000),
  });
  if (deployment.error) return <ProblemAlert error={deployment.error} />;
  const data = deployment.data;
  const reached = new Map((data?.events ?? []).map((event) => [event.stage, event]));
  const failedAt = data?.error?.stage;
  const active = failedAt
    ? STAGES.indexOf(failedAt)
    : Math.max(...STAGES.map((stage, index) => (reached.has(stage) ? index : -1))) + (data?.status === 'RUNNING' ? 1 : 0);
  return (
    <Stack gap="sm" aria-label={words.stages} data-testid="deploy-timeline" data-status={data?.status ?? ''}>
      <Stepper active={Math.max(active, 0)} size="sm" orientation="vertical">
        {STAGES.map((stage) => (
          <Stepper.Step
            key={stage}
            label={stage}
            color={failedAt === stage ? 'red' : undefined}
            description={reached.get(stage) ? `${time(reached.get(stage)!.at)} · ${reached.get(stage)!.message}` : undefined}
          />
        ))}
      </Stepper>
      <TemporalLink uiUrl={uiUrl} />
      {data?.status === 'RUNNING' && <Link to={`/services/${encodeURIComponent(data.serviceName)}`}>{words.service}</Link>}
      {data?.error && (
        <Alert color="red" role="alert" title={`${words.failed} ${data.error.stage}`}>
          <Text size="sm">{data.error.reason}</Text>
          {data.error.lastLogLines.length > 0 && (
            <>
              <Text size="sm" fw={700}>
                {words.lastLines}
              </Text>
              <Code block dir="ltr">
                {data.error.lastLogLines.join('\n')}
              </Code>
            </>
          )}
        </Alert>
      )}
    </Stack>
  );
}
