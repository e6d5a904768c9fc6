import { useState } from 'react';
import { Button, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api, dataOr } from './api/client';
import { useWords } from './i18n';
import { ProblemAlert } from './ui/ProblemAlert';

const WORDS = {
  en: { signIn: 'Sign in', signInAs: 'Sign in as a directory user (development)', pasteToken: 'Or paste a token', useToken: 'Use this token' },
  ar: { signIn: 'تسجيل الدخول', signInAs: 'الدخول كمستخدم من الدليل (للتطوير)', pasteToken: 'أو الصق رمزًا', useToken: 'استخدم هذا الرمز' },
};

/**
 * Sign in: in development, as one of the directory's users (a short-lived token from the development-only
 * endpoint, which answers 404 in production); otherwise with a token from the organisation's identity provider.
 */
export function SignIn({ onToken }: { onToken: (token: string) => void }) {
  const words = useWords(WORDS);
  const users = useQuery({ queryKey: ['dev-sign-in'], queryFn: async () => dataOr(await api.GET('/api/directory/dev-sign-in')), retry: false });
  const signIn = useMutation({
    mutationFn: async (userId: string) => dataOr(await api.POST('/api/directory/dev-sign-in', { body: { userId } })),
    onSuccess: (answer) => onToken(answer.token),
  });
  const [pasted, setPasted] = useState('');
  return (
    <Stack maw={560}>
      <Title order={2}>{words.signIn}</Title>
      {users.data && (
        <Stack gap="xs" role="group" aria-label={words.signInAs}>
          <Text>{words.signInAs}</Text>
          {users.data.items.map((user) => (
            <Button key={user.id} variant="light" onClick={() => signIn.mutate(user.id)}>
              {user.name} · {user.roles.join(', ')}
            </Button>
          ))}
        </Stack>
      )}
      {signIn.error && <ProblemAlert error={signIn.error} />}
      <TextInput label={words.pasteToken} value={pasted} onChange={(event) => setPasted(event.currentTarget.value)} dir="ltr" />
      <Button disabled={pasted.trim() === ''} onClick={() => onToken(pasted.trim())}>
        {words.useToken}
      </Button>
    </Stack>
  );
}
