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
  const keyOf = (site: string) => ['content-site-settings', site];
  const settings = useQuery({
    queryKey: keyOf(siteId),
    queryFn: async () => dataOr(await api.GET('/api/content/sites/{siteId}/settings', { params: { path: { siteId } } })),
    enabled: siteId !== '',
  });
  // The site travels with the change: a site picked while it is saved does not take its answer.
  const change = useMutation({
    mutationFn: async (asked: { site: string; localeFallback: boolean }) =>
      dataOr(
        await api.PUT('/api/content/sites/{siteId}/settings', { params: { path: { siteId: asked.site } }, body: { localeFallback: asked.localeFallback } }),
      ),
    onSuccess: (saved, asked) => queryClient.setQueryData(keyOf(asked.site), saved),
  });
  if (!settings.data) return null;
  return (
    <Stack gap={4}>
      <Switch
        label={words.fallback}
        description={session.isAdmin ? undefined : words.adminOnly}
        checked={settings.data.localeFallback}
        disabled={!session.isAdmin || change.isPending}
        onChange={(event) => change.mutate({ site: siteId, localeFallback: event.currentTarget.checked })}
      />
      {change.error && <ProblemAlert error={change.error} />}
    </Stack>
  );
}
