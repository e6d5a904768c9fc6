import { useEffect, useState } from 'react';
import { Alert, AppShell, Button, Group, Stack, Table, Text, TextInput, Title, useDirection } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, dataOr, ProblemError, TOKEN_KEY } from './api/client';
import { directionOf, Language, Words, wordsOf } from './i18n';

/** A problem as the API worded it: its title and its stable code. */
function ProblemAlert({ error }: { error: unknown }) {
  const problem = error instanceof ProblemError ? error.problem : { title: String(error), code: 'UNKNOWN', detail: undefined };
  return (
    <Alert color="red" role="alert" title={problem.title}>
      <Text size="sm" data-testid="problem-code">{problem.code}</Text>
      {problem.detail && <Text size="sm">{problem.detail}</Text>}
    </Alert>
  );
}

function SignIn({ words, onToken }: { words: Words; onToken: (token: string) => void }) {
  const users = useQuery({ queryKey: ['dev-sign-in'], queryFn: async () => dataOr(await api.GET('/api/directory/dev-sign-in')) });
  const signIn = useMutation({
    mutationFn: async (userId: string) => dataOr(await api.POST('/api/directory/dev-sign-in', { body: { userId } })),
    onSuccess: (answer) => onToken(answer.token),
  });
  const [pasted, setPasted] = useState('');
  return (
    <Stack maw={560}>
      <Title order={2}>{words.signIn}</Title>
      {users.data && (
        <Stack gap="xs" aria-label={words.signInAs}>
          <Text>{words.signInAs}</Text>
          {users.data.items.map((user) => (
            <Button key={user.id} variant="light" onClick={() => signIn.mutate(user.id)}>
              {user.name} · {user.roles.join(', ')}
            </Button>
          ))}
        </Stack>
      )}
      {signIn.error && <ProblemAlert error={signIn.error} />}
      <TextInput label={words.pasteToken} value={pasted} onChange={(event) => setPasted(event.currentTarget.value)} />
      <Button disabled={pasted.trim() === ''} onClick={() => onToken(pasted.trim())}>
        {words.useToken}
      </Button>
    </Stack>
  );
}

function Services({ words }: { words: Words }) {
  const services = useQuery({ queryKey: ['services'], queryFn: async () => dataOr(await api.GET('/api/infra/services', { params: { query: { limit: 100 } } })) });
  if (services.error) return <ProblemAlert error={services.error} />;
  if (!services.data) return <Text>{words.loading}</Text>;
  const groups = new Map<string, typeof services.data.items>();
  for (const service of services.data.items) groups.set(service.group, [...(groups.get(service.group) ?? []), service]);
  return (
    <Stack>
      {[...groups].map(([group, items]) => (
        <Stack key={group} gap="xs">
          <Title order={3}>
            {words.group}: {group}
          </Title>
          <Table aria-label={`${words.services}: ${group}`}>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{words.name}</Table.Th>
                <Table.Th>{words.status}</Table.Th>
                <Table.Th>{words.instances}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {items.map((service) => (
                <Table.Tr key={service.name}>
                  <Table.Td>{service.name}</Table.Td>
                  <Table.Td>{service.status}</Table.Td>
                  <Table.Td>
                    {service.runningInstances} / {service.desiredInstances}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Stack>
      ))}
      {services.data.items.length === 0 && <Text>{words.noServices}</Text>}
    </Stack>
  );
}

export function App() {
  const [language, setLanguage] = useState<Language>(() => (localStorage.getItem('opsflow.language') === 'ar' ? 'ar' : 'en'));
  const [token, setToken] = useState<string | null>(() => sessionStorage.getItem(TOKEN_KEY));
  const { setDirection } = useDirection();
  const queries = useQueryClient();
  const words = wordsOf(language);
  useEffect(() => {
    document.documentElement.lang = language;
    document.documentElement.dir = directionOf(language);
    document.title = words.title;
    setDirection(directionOf(language));
    localStorage.setItem('opsflow.language', language);
  }, [language, setDirection, words.title]);
  const changeToken = (next: string | null) => {
    if (next) sessionStorage.setItem(TOKEN_KEY, next);
    else sessionStorage.removeItem(TOKEN_KEY);
    queries.clear();
    setToken(next);
  };
  const me = useQuery({ queryKey: ['me', token], enabled: token !== null, queryFn: async () => dataOr(await api.GET('/api/directory/me')) });
  return (
    <AppShell header={{ height: 56 }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between">
          <Title order={1} size="h3">
            {words.title}
          </Title>
          <Group>
            {me.data && (
              <Text size="sm">
                {words.signedInAs} {me.data.name ?? me.data.id}
              </Text>
            )}
            <Button variant="subtle" onClick={() => setLanguage(language === 'en' ? 'ar' : 'en')}>
              {words.language}
            </Button>
            {token && (
              <Button variant="default" onClick={() => changeToken(null)}>
                {words.signOut}
              </Button>
            )}
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Main>
        {token === null ? (
          <SignIn words={words} onToken={changeToken} />
        ) : (
          <Stack>
            <Title order={2}>{words.services}</Title>
            {me.error ? <ProblemAlert error={me.error} /> : <Services words={words} />}
          </Stack>
        )}
      </AppShell.Main>
    </AppShell>
  );
}
