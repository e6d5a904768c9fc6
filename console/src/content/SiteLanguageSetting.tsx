import { Stack, Switch } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, dataOr } from '../api/client';
import { useWords } from '../i18n';
import { useSession } from '../session';
import { ProblemAlert } from '../ui/ProblemAlert';

const WORDS = {
  en: { fallback: 'Public reads fall back to the other language', adminOnly: 'An ADMIN changes this' },
  ar: { fallback: 'القراءات العامة تأخذ من اللغة الأخرى ما كان فارغًا', adminOnly: 'يغيّر هذا مدير النظام' },
};

/** The site's locale fallback (on by default): shown to its members, switched by an ADMIN. */
export function SiteLanguageSetting({ siteId }: { siteId: string }) {
  const words = useWords(WORDS);
  const session = useSession();
  const queryClient = useQueryClient();
  const key = ['content-site-settings', siteId];
  const settings = useQuery({
    queryKey: key,
    queryFn: async () => dataOr(await api.GET('/api/content/sites/{siteId}/settings', { params: { path: { siteId } } })),
    enabled: siteId !== '',
  });
  const change = useMutation({
    mutationFn: async (localeFallback: boolean) =>
      dataOr(await api.PUT('/api/content/sites/{siteId}/settings', { params: { path: { siteId } }, body: { localeFallback } })),
    onSuccess: (saved) => queryClient.setQueryData(key, saved),
  });
  if (!settings.data) return null;
  return (
    <Stack gap={4}>
      <Switch
        label={words.fallback}
        description={session.isAdmin ? undefined : words.adminOnly}
        checked={settings.data.localeFallback}
        disabled={!session.isAdmin || change.isPending}
        onChange={(event) => change.mutate(event.currentTarget.checked)}
      />
      {change.error && <ProblemAlert error={change.error} />}
    </Stack>
  );
}
