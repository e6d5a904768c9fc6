import { useState } from 'react';
import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, dataOr } from '../api/client';
import { useLocalised } from '../i18n';
import { ActionButton } from '../ui/bits';
import { ProblemAlert } from '../ui/ProblemAlert';

const WORDS = {
  en: {
    promote: 'Promote now',
    abort: 'Abort rollout',
    abortTitle: 'Abort this rollout?',
    abortBody: 'Every request goes back to the current version, the new version is removed, and the deploy ends REVERTED.',
  },
  ar: {
    promote: 'اعتمد النسخة الجديدة الآن',
    abort: 'أوقف النشر التدريجي',
    abortTitle: 'إيقاف هذا النشر التدريجي؟',
    abortBody: 'تعود كل الطلبات إلى النسخة الحالية، وتُزال النسخة الجديدة، وينتهي النشر بالحالة REVERTED.',
  },
};

/**
 * An operator deciding before the judge does: promote the canary to every request now, or abort (after a
 * confirmation) back to the current version. The buttons are offered while a step runs (`open`); a refusal
 * (409 when the rollout has just ended) stays shown after they go.
 */
export function RolloutActions({ serviceName, deploymentId, open }: { serviceName: string; deploymentId: string; open: boolean }) {
  const { words, common } = useLocalised(WORDS);
  const queries = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const path = { params: { path: { name: serviceName } } };
  const refresh = () => {
    void queries.invalidateQueries({ queryKey: ['deployment', deploymentId] });
    void queries.invalidateQueries({ queryKey: ['service-history', serviceName] });
  };
  const promote = useMutation({
    mutationFn: async () => dataOr(await api.POST('/api/infra/services/{name}/rollout/promote', path)),
    onSettled: refresh,
  });
  const abort = useMutation({
    mutationFn: async () => dataOr(await api.POST('/api/infra/services/{name}/rollout/abort', path)),
    onSettled: () => {
      // Closed either way, so that a refusal shows on the screen and not behind the dialog.
      setConfirming(false);
      refresh();
    },
  });
  return (
    <Stack gap="xs">
      {open && (
        <Group>
          <ActionButton action={promote} disabled={abort.isPending}>
            {words.promote}
          </ActionButton>
          <Button color="red" variant="outline" onClick={() => setConfirming(true)} disabled={promote.isPending}>
            {words.abort}
          </Button>
        </Group>
      )}
      {promote.error && <ProblemAlert error={promote.error} />}
      {abort.error && <ProblemAlert error={abort.error} />}
      <Modal opened={confirming} onClose={() => setConfirming(false)} title={words.abortTitle}>
        <Stack>
          <Text>{words.abortBody}</Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setConfirming(false)}>
              {common.cancel}
            </Button>
            <ActionButton action={abort} color="red">
              {words.abort}
            </ActionButton>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}
