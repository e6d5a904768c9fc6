import { useEffect, useRef } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, dataOr } from '../api/client';
import { ProblemAlert } from '../ui/ProblemAlert';
import { useDeployment } from './deployment';
import { DeployErrorAlert } from './DeploymentTimeline';
import { RolloutProgress } from './RolloutProgress';

/** The rollout of one deploy: its progress and, when it was reverted (or failed), why. Nothing for a deploy without a rollout. */
function DeploymentRollout({ deploymentId }: { deploymentId: string }) {
  const deployment = useDeployment(deploymentId);
  if (deployment.error) return <ProblemAlert error={deployment.error} />;
  if (!deployment.data?.rollout) return null;
  return (
    <>
      <RolloutProgress deployment={deployment.data} />
      <DeployErrorAlert deployment={deployment.data} />
    </>
  );
}

/**
 * A service's latest deploy, asked for as often as the service itself, and its rollout if it has one: a
 * rollout started elsewhere shows up here, with promote and abort while a step runs. When the latest deploy
 * or its status changes, the deploy history is asked for again.
 */
export function ServiceRollout({ name }: { name: string }) {
  const queries = useQueryClient();
  const latest = useQuery({
    queryKey: ['service-latest-deployment', name],
    queryFn: async () => dataOr(await api.GET('/api/infra/services/{name}/deployments', { params: { path: { name }, query: { limit: 1 } } })).items[0] ?? null,
    refetchInterval: 2000,
  });
  const seen = latest.data ? `${latest.data.deploymentId}:${latest.data.status}` : null;
  const before = useRef(seen);
  useEffect(() => {
    if (before.current !== null && seen !== null && before.current !== seen) void queries.invalidateQueries({ queryKey: ['service-history', name] });
    before.current = seen ?? before.current;
  }, [seen, name, queries]);
  if (!latest.data) return null;
  return <DeploymentRollout key={latest.data.deploymentId} deploymentId={latest.data.deploymentId} />;
}
