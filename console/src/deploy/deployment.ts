import { useQuery } from '@tanstack/react-query';
import { api, dataOr } from '../api/client';
import type { paths } from '../api/schema';

/** A deploy as `GET /api/infra/deployments/{id}` answers it: its stage, status, events, and its rollout if it has one. */
export type Deployment = paths['/api/infra/deployments/{deploymentId}']['get']['responses'][200]['content']['application/json'];

/** A deploy, asked for again each second while it is DEPLOYING (a rollout's steps included), and no more once it ends. */
export function useDeployment(deploymentId: string) {
  return useQuery({
    queryKey: ['deployment', deploymentId],
    queryFn: async () => dataOr(await api.GET('/api/infra/deployments/{deploymentId}', { params: { path: { deploymentId } } })),
    refetchInterval: (query) => (query.state.data && query.state.data.status !== 'DEPLOYING' ? false : 1000),
  });
}
