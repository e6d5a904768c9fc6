import { useEffect, useState } from 'react';
import { Button, Group, PasswordInput, Stack, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, dataOr } from '../api/client';
import type { paths } from '../api/schema';
import { fill, useLocalised, useWords } from '../i18n';
import { ActionButton, Loading, READABLE_DESCRIPTION, Section, SitePicker, useSiteChoice } from '../ui/bits';
import { fieldError, ProblemAlert } from '../ui/ProblemAlert';

const WORDS = {
  en: {
    heading: 'Status callbacks',
    explain: "Each change of an email's delivery status is posted to the site's URL, signed with HMAC-SHA256 under its secret (X-Opsflow-Signature).",
    url: 'Callback URL',
    secret: 'Signing secret (write-only)',
    secretNeeded: '32 to 200 characters; needed the first time',
    secretKept: 'Left empty, the stored secret is kept',
    save: 'Save the callback',
    test: 'Send a test event',
    remove: 'Remove the callback',
    none: 'No callback is set for this site.',
    set: 'Set, last changed {when}.',
    secretSet: 'A signing secret is set.',
    delivered: 'Delivered ({status})',
    notDelivered: 'Not delivered: {detail}',
    notDeliveredStatus: 'Not delivered ({status}): {detail}',
  },
  ar: {
    heading: 'إشعارات الحالة',
    explain: 'يُرسل كل تغيّر في حالة تسليم البريد إلى عنوان الموقع، موقّعًا بـ HMAC-SHA256 بسرّه (X-Opsflow-Signature).',
    url: 'عنوان الإشعار',
    secret: 'سر التوقيع (للكتابة فقط)',
    secretNeeded: 'من 32 إلى 200 حرف؛ مطلوب أول مرة',
    secretKept: 'إن تُرك فارغًا يبقى السر المحفوظ',
    save: 'احفظ الإشعار',
    test: 'أرسل حدثًا تجريبيًا',
    remove: 'احذف الإشعار',
    none: 'لا إشعار مضبوط لهذا الموقع.',
    set: 'مضبوط، آخر تغيير {when}.',
    secretSet: 'سر التوقيع محفوظ.',
    delivered: 'سُلّم ({status})',
    notDelivered: 'لم يُسلّم: {detail}',
    notDeliveredStatus: 'لم يُسلّم ({status}): {detail}',
  },
};

/** What the receiver answered the signed test event the API just posted to it. */
type TestEvent = paths['/api/settings/callbacks/{siteId}/test']['post']['responses'][200]['content']['application/json'];

/** The site's callback (its secret only said to exist), or null when none is set: the API's 404. */
async function readCallback(siteId: string) {
  const answer = await api.GET('/api/settings/callbacks/{siteId}', { params: { path: { siteId } } });
  return answer.response.status === 404 ? null : dataOr(answer);
}

function TestEventResult({ result }: { result: TestEvent }) {
  const words = useWords(WORDS);
  const said = result.delivered
    ? fill(words.delivered, { status: result.status ?? '' })
    : fill(result.status === null ? words.notDelivered : words.notDeliveredStatus, { status: result.status ?? '', detail: result.detail });
  return (
    <Text size="sm" c={result.delivered ? 'teal.9' : 'red.9'} data-testid="callback-test">
      {said}
    </Text>
  );
}

/** One site's callback: its URL, its secret (written, never read back), a test event, its removal. */
function SiteCallback({ siteId }: { siteId: string }) {
  const { words, time } = useLocalised(WORDS);
  const queries = useQueryClient();
  const key = ['status-callback', siteId];
  const current = useQuery({ queryKey: key, queryFn: () => readCallback(siteId) });
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  // The secret's input is remade after each save: it is uncontrolled, so that what is typed is never in the markup.
  const [secretInput, setSecretInput] = useState(0);
  useEffect(() => setUrl(current.data?.url ?? ''), [current.data]);
  const save = useMutation({
    mutationFn: async () =>
      dataOr(
        await api.PUT('/api/settings/callbacks/{siteId}', {
          params: { path: { siteId } },
          body: { url: url.trim(), ...(secret !== '' ? { secret } : {}) },
        }),
      ),
    onSuccess: (saved) => {
      setSecret('');
      setSecretInput((count) => count + 1);
      queries.setQueryData(key, saved);
    },
  });
  const remove = useMutation({
    mutationFn: async () => dataOr(await api.DELETE('/api/settings/callbacks/{siteId}', { params: { path: { siteId } } })),
    onSuccess: () => queries.setQueryData(key, null),
  });
  const test = useMutation({
    mutationFn: async () => dataOr(await api.POST('/api/settings/callbacks/{siteId}/test', { params: { path: { siteId } } })),
  });
  if (current.isLoading) return <Loading />;
  if (current.error) return <ProblemAlert error={current.error} />;
  const stored = current.data ?? null;
  return (
    <Stack gap="xs">
      {stored ? (
        <Text size="sm">
          {fill(words.set, { when: time(stored.updatedAt) })} {stored.hasSecret && words.secretSet}
        </Text>
      ) : (
        <Text size="sm">{words.none}</Text>
      )}
      <Group align="start">
        <TextInput
          label={words.url}
          type="url"
          value={url}
          onChange={(event) => setUrl(event.currentTarget.value)}
          error={fieldError(save.error, 'url')}
          dir="ltr"
          w={420}
        />
        <PasswordInput
          key={secretInput}
          label={words.secret}
          description={stored?.hasSecret ? words.secretKept : words.secretNeeded}
          descriptionProps={READABLE_DESCRIPTION}
          onChange={(event) => setSecret(event.currentTarget.value)}
          error={fieldError(save.error, 'secret')}
          autoComplete="new-password"
          dir="ltr"
          w={320}
        />
      </Group>
      {save.error && <ProblemAlert error={save.error} />}
      {test.error && <ProblemAlert error={test.error} />}
      {remove.error && <ProblemAlert error={remove.error} />}
      <Group>
        <ActionButton action={save} disabled={url.trim() === ''}>
          {words.save}
        </ActionButton>
        <ActionButton action={test} variant="light" disabled={!stored}>
          {words.test}
        </ActionButton>
        {stored && (
          <Button variant="default" onClick={() => remove.mutate()} loading={remove.isPending}>
            {words.remove}
          </Button>
        )}
      </Group>
      {test.data && <TestEventResult result={test.data} />}
    </Stack>
  );
}

/** Each site's status callback: where the platform posts delivery statuses, signed, and a test event to try it. */
export function StatusCallbacks() {
  const words = useWords(WORDS);
  const [siteId, setSiteId] = useSiteChoice();
  return (
    <Section title={words.heading}>
      <Text size="sm">{words.explain}</Text>
      <SitePicker siteId={siteId} onChange={setSiteId} />
      {siteId.trim() !== '' && <SiteCallback key={siteId.trim()} siteId={siteId.trim()} />}
    </Section>
  );
}
