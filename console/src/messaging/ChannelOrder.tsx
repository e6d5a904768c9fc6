import { Button, Group, Stack, Text, Title } from '@mantine/core';
import { fill, useWords } from '../i18n';
import { DataTable } from '../ui/DataTable';
import { activeInOrder, Channel, ChannelConfig } from './channel-configs';
import { RateLimit } from './RateLimit';

const WORDS = {
  en: {
    emailOrder: 'Email sending order',
    smsOrder: 'SMS sending order',
    explain: 'A message goes through the first of these; a passing failure moves it on to the next, a permanent one does not.',
    position: 'Position',
    name: 'Name',
    rateLimit: 'Rate limit',
    move: 'Move',
    up: 'Up',
    down: 'Down',
    takeOut: 'Take out',
    moveUp: 'Move {name} up',
    moveDown: 'Move {name} down',
    takeOutOf: 'Take out {name}',
    noneActive: 'No configuration is active: nothing is sent on this channel.',
  },
  ar: {
    emailOrder: 'ترتيب إرسال البريد',
    smsOrder: 'ترتيب إرسال الرسائل القصيرة',
    explain: 'تُرسل الرسالة عبر أول هذه الإعدادات؛ الإخفاق العابر ينقلها إلى التالي، والإخفاق الدائم لا ينقلها.',
    position: 'الترتيب',
    name: 'الاسم',
    rateLimit: 'حد المعدل',
    move: 'نقل',
    up: 'إلى الأعلى',
    down: 'إلى الأسفل',
    takeOut: 'أخرج',
    moveUp: 'انقل {name} إلى الأعلى',
    moveDown: 'انقل {name} إلى الأسفل',
    takeOutOf: 'أخرج {name} من الترتيب',
    noneActive: 'لا إعداد مفعّل: لا يُرسل شيء عبر هذه القناة.',
  },
};

/** The ids in a new order: the one at `from` swapped with its neighbour at `to`. */
function swapped(ids: string[], from: number, to: number): string[] {
  const next = [...ids];
  [next[from], next[to]] = [next[to], next[from]];
  return next;
}

/**
 * The active configurations in the order they are tried; each moves up, down or out as a new order (`onOrder`,
 * a PUT …/order). That order is made from the list shown, so the buttons wait while the list is `busy`.
 */
export function ChannelOrder({
  channel,
  configs,
  busy,
  onOrder,
}: {
  channel: Channel;
  configs: ChannelConfig[];
  busy: boolean;
  onOrder: (ids: string[]) => void;
}) {
  const words = useWords(WORDS);
  const active = activeInOrder(configs);
  const ids = active.map((config) => config.id);
  const title = channel === 'EMAIL' ? words.emailOrder : words.smsOrder;
  return (
    <Stack gap="xs">
      <Title order={4}>{title}</Title>
      <Text size="sm">{words.explain}</Text>
      <DataTable
        label={title}
        rows={active}
        rowKey={(config) => config.id}
        columns={[
          { header: words.position, cell: (config) => ids.indexOf(config.id) + 1 },
          { header: words.name, cell: (config) => config.configName },
          { header: words.rateLimit, cell: (config) => <RateLimit config={config} /> },
          {
            header: '',
            label: words.move,
            cell: (config) => {
              const at = ids.indexOf(config.id);
              const name = { name: config.configName };
              return (
                <Group gap="xs">
                  <Button
                    size="compact-sm"
                    variant="default"
                    disabled={at === 0 || busy}
                    onClick={() => onOrder(swapped(ids, at, at - 1))}
                    aria-label={fill(words.moveUp, name)}
                  >
                    {words.up}
                  </Button>
                  <Button
                    size="compact-sm"
                    variant="default"
                    disabled={at === ids.length - 1 || busy}
                    onClick={() => onOrder(swapped(ids, at, at + 1))}
                    aria-label={fill(words.moveDown, name)}
                  >
                    {words.down}
                  </Button>
                  <Button
                    size="compact-sm"
                    variant="subtle"
                    disabled={busy}
                    onClick={() => onOrder(ids.filter((id) => id !== config.id))}
                    aria-label={fill(words.takeOutOf, name)}
                  >
                    {words.takeOut}
                  </Button>
                </Group>
              );
            },
          },
        ]}
      />
      {active.length === 0 && <Text size="sm">{words.noneActive}</Text>}
    </Stack>
  );
}
