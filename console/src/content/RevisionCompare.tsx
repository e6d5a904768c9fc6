import { useState } from 'react';
import { Badge, Button, Group, NativeSelect, Text } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { api, dataOr } from '../api/client';
import { useWords } from '../i18n';
import { Section, ActionButton } from '../ui/bits';
import { DataTable } from '../ui/DataTable';
import { ProblemAlert } from '../ui/ProblemAlert';

const WORDS = {
  en: {
    heading: 'Compare revisions',
    from: 'From revision',
    to: 'To revision',
    draft: 'the latest draft',
    published: 'what is published',
    compare: 'Compare',
    field: 'Field',
    change: 'Change',
    before: 'Before',
    after: 'After',
    added: 'added',
    removed: 'removed',
    changed: 'changed',
    same: 'The two are the same.',
    restore: 'Restore revision',
  },
  ar: {
    heading: 'قارن المراجعات',
    from: 'من المراجعة',
    to: 'إلى المراجعة',
    draft: 'أحدث مسودة',
    published: 'المنشور',
    compare: 'قارن',
    field: 'الحقل',
    change: 'التغيير',
    before: 'قبل',
    after: 'بعد',
    added: 'أضيف',
    removed: 'حذف',
    changed: 'تغيّر',
    same: 'لا فرق بينهما.',
    restore: 'استعد المراجعة',
  },
};

type Change = { path: string; before?: unknown; after?: unknown };
type Kind = 'added' | 'removed' | 'changed';

const kindOf = (change: Change): Kind => (!('before' in change) ? 'added' : !('after' in change) ? 'removed' : 'changed');
const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * A value beside the other side's, with the part that differs marked inside the line: the text both share
 * at their start and end stays plain, the rest is marked (struck through on the side before).
 */
function MarkedValue({ value, other, side }: { value: unknown; other: unknown; side: 'before' | 'after' }) {
  const text = shown(value);
  const otherText = other === undefined ? '' : shown(other);
  let start = 0;
  while (start < text.length && start < otherText.length && text[start] === otherText[start]) start++;
  let end = 0;
  while (end < text.length - start && end < otherText.length - start && text[text.length - 1 - end] === otherText[otherText.length - 1 - end]) end++;
  const changed = text.slice(start, text.length - end);
  const Tag = side === 'before' ? 'del' : 'ins';
  return (
    <Text size="sm" component="span" style={{ whiteSpace: 'pre-wrap' }}>
      {text.slice(0, start)}
      {changed && (
        <Tag data-testid={`${side}-marked`} style={{ background: side === 'before' ? 'var(--mantine-color-red-1)' : 'var(--mantine-color-green-1)' }}>
          {changed}
        </Tag>
      )}
      {text.slice(text.length - end)}
    </Text>
  );
}

/**
 * Two revisions of an item side by side, field by field (the API's `compare`): each field added, removed or
 * changed, with text changes marked inside the line; either side that is a revision can be restored as the
 * draft from here.
 */
export function RevisionCompare(props: { collection: string; id: string; revisions: number[]; canEdit: boolean; onRestore: (rev: number) => void }) {
  const words = useWords(WORDS);
  const newest = props.revisions[0];
  const [from, setFrom] = useState<string>('');
  const [to, setTo] = useState<string>('draft');
  const fromRev = from || String(props.revisions[1] ?? newest ?? '');
  const compare = useMutation({
    mutationFn: async () =>
      dataOr(
        await api.GET(`${props.collection}/{id}/compare` as '/api/content/pages/{id}/compare', {
          params: { path: { id: props.id }, query: { from: Number(fromRev), to } },
        }),
      ),
  });
  const revisionOptions = props.revisions.map((rev) => ({ value: String(rev), label: String(rev) }));
  const restorable = compare.data ? [compare.data.from, compare.data.to].filter((side): side is number => typeof side === 'number') : [];
  return (
    <Section title={words.heading} gap="xs">
      <Group align="end">
        <NativeSelect label={words.from} data={revisionOptions} value={fromRev} onChange={(event) => setFrom(event.currentTarget.value)} />
        <NativeSelect
          label={words.to}
          data={[{ value: 'draft', label: words.draft }, { value: 'published', label: words.published }, ...revisionOptions]}
          value={to}
          onChange={(event) => setTo(event.currentTarget.value)}
        />
        <ActionButton action={compare} variant="light" disabled={fromRev === ''}>
          {words.compare}
        </ActionButton>
      </Group>
      {compare.error && <ProblemAlert error={compare.error} />}
      {compare.data && compare.data.changes.length === 0 && <Text size="sm">{words.same}</Text>}
      {compare.data && compare.data.changes.length > 0 && (
        <DataTable
          label={`${words.heading} ${compare.data.from} → ${compare.data.to}`}
          rows={compare.data.changes as Change[]}
          rowKey={(change) => change.path}
          columns={[
            { header: words.field, cell: (change) => change.path, ltr: true },
            {
              header: words.change,
              cell: (change) => (
                // Black text on the tint, as StatusBadge: the colour is a cue, the word carries the meaning (AA contrast).
                <Badge variant="light" c="black" color={{ added: 'green', removed: 'red', changed: 'blue' }[kindOf(change)]}>
                  {words[kindOf(change)]}
                </Badge>
              ),
            },
            { header: words.before, cell: (change) => ('before' in change ? <MarkedValue value={change.before} other={change.after} side="before" /> : '—') },
            { header: words.after, cell: (change) => ('after' in change ? <MarkedValue value={change.after} other={change.before} side="after" /> : '—') },
          ]}
        />
      )}
      {props.canEdit && restorable.length > 0 && (
        <Group gap="xs">
          {restorable.map((rev) => (
            <Button key={rev} size="xs" variant="default" onClick={() => props.onRestore(rev)}>
              {words.restore} {rev}
            </Button>
          ))}
        </Group>
      )}
    </Section>
  );
}
