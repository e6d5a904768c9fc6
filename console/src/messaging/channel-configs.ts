import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, dataOr } from '../api/client';
import type { paths } from '../api/schema';

export type Channel = 'EMAIL' | 'SMS';
export const CONFIG_PATHS = { EMAIL: '/api/settings/email', SMS: '/api/settings/sms' } as const;

/** A configuration as the API lists it (email and SMS alike), its passwords only said to exist. */
export type ChannelConfig = paths['/api/settings/email']['get']['responses'][200]['content']['application/json']['items'][number];

/** The active configurations, first tried first (the API tries the lowest priority first). */
export function activeInOrder(configs: ChannelConfig[]): ChannelConfig[] {
  return configs.filter((config) => config.isActive).sort((a, b) => a.priority - b.priority || a.configName.localeCompare(b.configName));
}

/** PUT …/order: exactly these configurations active, in this order; every other one inactive. */
export function useSetOrder(channel: Channel) {
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (ids: string[]) => dataOr(await api.PUT(`${CONFIG_PATHS[channel]}/order` as '/api/settings/email/order', { body: { ids } })),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['channel-configs', channel] }),
  });
}
