import { useEffect, useRef, useState } from 'react';
import { Alert, Button, Divider, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api, dataOr } from '../api/client';
import { useWords } from '../i18n';
import { ProblemAlert } from '../ui/ProblemAlert';
import { goToProvider, redirectUri, takeReturnedCode } from './provider-sign-in';

const WORDS = {
  en: {
    signIn: 'Sign in',
    withProvider: 'Sign in with your organisation',
    signInAs: 'Sign in as a directory user (development)',
    pasteToken: 'Or paste a token',
    useToken: 'Use this token',
    stateRefused: 'This sign-in was not started from this tab, so it was not used. Sign in again.',
  },
  ar: {
    signIn: 'تسجيل الدخول',
    withProvider: 'الدخول عبر مؤسستك',
    signInAs: 'الدخول كمستخدم من الدليل (للتطوير)',
    pasteToken: 'أو الصق رمزًا',
    useToken: 'استخدم هذا الرمز',
    stateRefused: 'لم يبدأ تسجيل الدخول هذا من هذه النافذة، فلم يُستخدم. سجّل الدخول مجددًا.',
  },
};

/**
 * Sign in: through the organisation's identity provider when the platform has one; in development, as one of
 * the directory's users (a short-lived token from an endpoint that answers 404 in production); or with a
 * pasted token.
 */
export function SignIn({ onToken }: { onToken: (token: string) => void }) {
  const words = useWords(WORDS);
  const options = useQuery({ queryKey: ['sign-in-options'], queryFn: async () => dataOr(await api.GET('/api/directory/sign-in-options')) });
  const users = useQuery({
    queryKey: ['dev-sign-in'],
    enabled: options.data?.development === true,
    queryFn: async () => dataOr(await api.GET('/api/directory/dev-sign-in')),
  });
  const signIn = useMutation({
    mutationFn: async (userId: string) => dataOr(await api.POST('/api/directory/dev-sign-in', { body: { userId } })),
    onSuccess: (answer) => onToken(answer.token),
  });
  const exchange = useMutation({
    mutationFn: async (returned: { code: string; codeVerifier: string }) =>
      dataOr(await api.POST('/api/directory/sign-in/token', { body: { ...returned, redirectUri: redirectUri() } })),
    onSuccess: (answer) => onToken(answer.token),
  });
  const [stateRefused, setStateRefused] = useState(false);
  // Back from the provider with a code: exchange it, once (StrictMode runs effects twice in development).
  const taken = useRef(false);
  useEffect(() => {
    if (taken.current) return;
    taken.current = true;
    const returned = takeReturnedCode();
    if (returned && 'refused' in returned) setStateRefused(true);
    else if (returned) exchange.mutate(returned);
  }, [exchange]);
  const [pasted, setPasted] = useState('');
  const provider = options.data?.identityProvider;
  return (
    <Stack maw={560}>
      <Title order={2}>{words.signIn}</Title>
      {options.error && <ProblemAlert error={options.error} />}
      {stateRefused && (
        <Alert color="red" role="alert">
          {words.stateRefused}
        </Alert>
      )}
      {exchange.error && <ProblemAlert error={exchange.error} />}
      {provider && (
        <Button size="md" onClick={() => void goToProvider(provider)} loading={exchange.isPending}>
          {words.withProvider}
        </Button>
      )}
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
      <Divider />
      <TextInput label={words.pasteToken} value={pasted} onChange={(event) => setPasted(event.currentTarget.value)} dir="ltr" />
      <Button variant="default" disabled={pasted.trim() === ''} onClick={() => onToken(pasted.trim())}>
        {words.useToken}
      </Button>
    </Stack>
  );
}
