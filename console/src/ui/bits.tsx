import { ReactNode, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api, dataOr } from '../api/client';
import { Alert, Anchor, Badge, Button, ButtonProps, Group, NativeSelect, Paper, Stack, Text, TextInput, Title } from '@mantine/core';
import { useSession } from '../session';
import { COMMON, useWords } from '../i18n';

/**
 * A link to the Temporal Web UI wherever the API gave a `uiUrl`: the workflow's internals live there. Beside
 * it, where the platform names a tracing backend (TRACES_LINK), a link to the run's traces.
 */
export function TemporalLink({ uiUrl, label }: { uiUrl: string | null | undefined; label?: string }) {
  const words = useWords(COMMON);
  const links = useQuery({ queryKey: ['links'], queryFn: async () => dataOr(await api.GET('/api/settings/links')), staleTime: Infinity });
  if (!uiUrl) return null;
  const traces = links.data?.traces ? traceLinkOf(links.data.traces, uiUrl) : null;
  const temporal = (
    <Anchor href={uiUrl} target="_blank" rel="noreferrer" size="sm">
      {label ?? words.openInTemporal}
    </Anchor>
  );
  if (!traces) return temporal;
  return (
    <Group gap="xs" component="span">
      {temporal}
      <Anchor href={traces} target="_blank" rel="noreferrer" size="sm">
        {words.openTraces}
      </Anchor>
    </Group>
  );
}

/** The run's traces: the link's `{workflowId}` filled with the workflow id the Web UI's address names. */
function traceLinkOf(template: string, uiUrl: string): string | null {
  const found = /\/workflows\/([^/]+)\//.exec(new URL(uiUrl).pathname);
  return found ? template.replace('{workflowId}', found[1]) : null;
}

const STATUS_COLOURS: Record<string, string> = {
  RUNNING: 'green',
  PUBLISHED: 'green',
  APPROVED: 'green',
  SUCCESS: 'green',
  DONE: 'green',
  COMPLETED: 'green',
  HEALTHY: 'green',
  // A service hostname's certificate.
  ISSUED: 'green',
  FAILED: 'red',
  // A rollout reverted: the new version never took over, so never green; orange beside FAILED's red.
  REVERTED: 'orange',
  // The swarm rolled an update back by itself: the previous version serves, the new one never took over.
  ROLLED_BACK: 'orange',
  OOM_KILLED: 'red',
  // A service's events (what became of its instances).
  STARTED: 'blue',
  EXITED: 'red',
  RESTARTED: 'yellow',
  LIMITS_CHANGED: 'violet',
  ABORTED: 'orange',
  // A canary step's verdict.
  PASS: 'green',
  PROMOTED: 'green',
  FAIL: 'red',
  WAIT: 'yellow',
  REJECTED: 'red',
  UNHEALTHY: 'red',
  PENDING: 'yellow',
  PENDING_APPROVAL: 'yellow',
  DEPLOYING: 'blue',
  DRAFT: 'gray',
  ARCHIVED: 'gray',
  // An email's delivery status (GOV.UK Notify's words, lower case as the API gives them).
  created: 'gray',
  sending: 'blue',
  delivered: 'green',
  'temporary-failure': 'yellow',
  'permanent-failure': 'red',
  'technical-failure': 'red',
  suppressed: 'gray',
};

/** `label`: the status in the reader's words where the screen translates it; the colour still follows `status`. */
export function StatusBadge({ status, label }: { status: string; label?: string }) {
  // A tinted badge with black text: the colour is a cue, the word carries the meaning, and it keeps AA contrast.
  return (
    <Badge color={STATUS_COLOURS[status] ?? 'gray'} variant="light" c="black">
      {label ?? status}
    </Badge>
  );
}

/** Lists paged with the API's cursors: "load more" while the API gives a next cursor. */
export function MoreButton({ hasMore, loading, onMore }: { hasMore: boolean; loading: boolean; onMore: () => void }) {
  const words = useWords(COMMON);
  if (!hasMore) return null;
  return (
    <Group>
      <Button variant="light" loading={loading} onClick={onMore}>
        {words.more}
      </Button>
    </Group>
  );
}

/**
 * An input's `descriptionProps`: Mantine writes descriptions in its dimmed grey, under AA contrast on white
 * (axe flags it); gray.7, like the console's other small print, keeps it.
 */
export const READABLE_DESCRIPTION = { c: 'gray.7' };

export function ReadOnlyNote({ show }: { show: boolean }) {
  const words = useWords(COMMON);
  return show ? (
    <Text size="sm" c="gray.7" data-testid="read-only">
      {words.readOnly}
    </Text>
  ) : null;
}

export function Loading({ children }: { children?: ReactNode }) {
  const words = useWords(COMMON);
  return <Text c="gray.7">{children ?? words.loading}</Text>;
}

/** A list's heading, with a button that asks the API again for a list that changes behind the screen (runs, sends). */
export function ListHeading({ title, onRefresh }: { title: string; onRefresh: () => void }) {
  const words = useWords(COMMON);
  return (
    <Group justify="space-between">
      <Title order={3}>{title}</Title>
      <Button size="xs" variant="subtle" onClick={onRefresh} aria-label={`${words.refresh}: ${title}`}>
        ↻
      </Button>
    </Group>
  );
}

/** A warning: the yellow tint is the cue, the words are black, so they keep AA contrast on it. */
export function WarningAlert({ title, children }: { title?: string; children: ReactNode }) {
  return (
    <Alert color="yellow" title={title} styles={{ title: { color: 'var(--mantine-color-black)' }, message: { color: 'var(--mantine-color-black)' } }}>
      {children}
    </Alert>
  );
}

/** The site a screen's SitePicker holds: the user's first site to begin with. */
export function useSiteChoice(): [string, (siteId: string) => void] {
  const session = useSession();
  return useState(session.sites[0] ?? '');
}

/** The site a list shows: one of the user's own sites, or any site an ADMIN (who belongs to every one) names. */
export function SitePicker({ siteId, onChange }: { siteId: string; onChange: (siteId: string) => void }) {
  const words = useWords(COMMON);
  const session = useSession();
  return session.isAdmin ? (
    <TextInput label={words.site} value={siteId} onChange={(event) => onChange(event.currentTarget.value)} dir="ltr" w={240} />
  ) : (
    <NativeSelect label={words.site} data={session.sites} value={siteId} onChange={(event) => onChange(event.currentTarget.value)} w={240} />
  );
}

/** A titled section of a screen, framed; with `onRefresh`, its heading carries the refresh button. */
export function Section({ title, onRefresh, gap, children }: { title: string; onRefresh?: () => void; gap?: 'xs'; children: ReactNode }) {
  return (
    <Paper withBorder p="sm">
      <Stack gap={gap}>
        {onRefresh ? <ListHeading title={title} onRefresh={onRefresh} /> : <Title order={3}>{title}</Title>}
        {children}
      </Stack>
    </Paper>
  );
}

/** A button that runs a mutation that takes nothing, and shows it busy while it runs. */
export function ActionButton({
  action,
  children,
  ...props
}: { action: { mutate: () => void; isPending: boolean }; children: ReactNode } & Omit<ButtonProps, 'loading'>) {
  return (
    <Button {...props} onClick={() => action.mutate()} loading={action.isPending}>
      {children}
    </Button>
  );
}
