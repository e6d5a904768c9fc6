import { useEffect, useRef, useState } from 'react';
import { Checkbox, Group, Input, Text, Textarea } from '@mantine/core';
import { DEFAULT_LABELS, Link, RichTextEditor } from '@mantine/tiptap';
import { Editor, useEditor } from '@tiptap/react';
import StarterKit from '@tiptap/starter-kit';
import { useLanguage, useWords } from '../i18n';

const WORDS = {
  en: { source: 'HTML source', html: 'HTML', lossy: 'Shown as its source: the visual editor would change some of its markup.' },
  ar: { source: 'مصدر HTML', html: 'HTML', lossy: 'معروض بمصدره: المحرر المرئي سيغيّر بعض وسومه.' },
};

/** The toolbar's names in Arabic; English is Mantine's own. */
const ARABIC_LABELS = {
  ...DEFAULT_LABELS,
  boldControlLabel: 'غامق',
  italicControlLabel: 'مائل',
  strikeControlLabel: 'يتوسطه خط',
  clearFormattingControlLabel: 'أزل التنسيق',
  h2ControlLabel: 'عنوان من المستوى 2',
  h3ControlLabel: 'عنوان من المستوى 3',
  bulletListControlLabel: 'قائمة نقطية',
  orderedListControlLabel: 'قائمة مرقمة',
  blockquoteControlLabel: 'اقتباس',
  linkControlLabel: 'رابط',
  unlinkControlLabel: 'أزل الرابط',
  linkEditorInputLabel: 'عنوان الرابط',
  linkEditorInputPlaceholder: 'https://example.com/',
  linkEditorExternalLink: 'يفتح الرابط في لسان جديد',
  linkEditorInternalLink: 'يفتح الرابط في اللسان نفسه',
  linkEditorSave: 'احفظ',
  undoControlLabel: 'تراجع',
  redoControlLabel: 'أعد',
};

type Props = {
  label: string;
  value: string;
  language: 'en' | 'ar';
  error?: string;
  onChange: (html: string) => void;
};

/**
 * A rich-text field: a visual editor, or the HTML source as typed. The editor writes only what is changed in
 * it: a stored text left as it was (or edited and undone) keeps its markup byte for byte, and a text whose
 * markup the editor would rewrite (a class, an iframe) opens as its source, which keeps any markup at all.
 */
export function RichTextField({ label, value, language, error, onChange }: Props) {
  const words = useWords(WORDS);
  const [source, setSource] = useState(false);
  // A stored text the visual editor would rewrite opens as its source, once, saying why.
  const [lossy, setLossy] = useState(false);
  const noteLossy = () => {
    if (lossy) return;
    setLossy(true);
    setSource(true);
  };
  const direction = language === 'ar' ? 'rtl' : 'ltr';
  return (
    <Input.Wrapper
      label={
        <Group justify="space-between" gap="xs" wrap="nowrap">
          <span>{label}</span>
          <Checkbox
            size="xs"
            label={words.source}
            aria-label={`${label}: ${words.source}`}
            checked={source}
            onChange={(event) => setSource(event.currentTarget.checked)}
          />
        </Group>
      }
      labelElement="div"
      labelProps={{ style: { width: '100%' } }}
      error={error}
    >
      {source ? (
        <Textarea
          aria-label={`${label} (${words.html})`}
          value={value}
          dir={direction}
          lang={language}
          autosize
          minRows={4}
          error={Boolean(error)}
          styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
          onChange={(event) => onChange(event.currentTarget.value)}
        />
      ) : (
        <VisualEditor label={label} value={value} language={language} invalid={Boolean(error)} onChange={onChange} onLossy={noteLossy} />
      )}
      {lossy && (
        <Text size="xs" c="dimmed" mt={4}>
          {words.lossy}
        </Text>
      )}
    </Input.Wrapper>
  );
}

/** What the editor holds as HTML; an emptied editor (`<p></p>`) as empty, so a read in the other language falls back to it. */
const shownOf = (editor: Editor) => (editor.isEmpty ? '' : editor.getHTML());

function VisualEditor({ label, value, language, invalid, onChange, onLossy }: Omit<Props, 'error'> & { invalid: boolean; onLossy: () => void }) {
  const consoleLanguage = useLanguage();
  const attributes = {
    'aria-label': label,
    'aria-multiline': 'true',
    'aria-invalid': String(invalid),
    role: 'textbox',
    dir: language === 'ar' ? 'rtl' : 'ltr',
    lang: language,
  };
  // The stored text and the editor's rendering of it: a document back where it started saves the stored text
  // as it was, so a click, or an edit undone, rewrites nothing.
  const baseline = useRef<{ stored: string; shown: string } | null>(null);
  const start = (shown: string) => {
    baseline.current = { stored: value, shown };
    if (shown !== value) onLossy();
  };
  const editor = useEditor({
    // No trailing paragraph: it would be added to a text ending in a heading or a list as soon as it is clicked.
    extensions: [StarterKit.configure({ link: false, trailingNode: false }), Link],
    content: value,
    editorProps: { attributes },
    onUpdate: ({ editor: changed }) => {
      const shown = shownOf(changed);
      onChange(baseline.current && shown === baseline.current.shown ? baseline.current.stored : shown);
    },
  });
  // A value changed from outside (a revision restored) is shown; the editor's own echo is not re-applied.
  useEffect(() => {
    if (!editor) return;
    const shown = shownOf(editor);
    if (baseline.current === null) return start(shown);
    const echo = value === shown || (value === baseline.current.stored && shown === baseline.current.shown);
    if (echo) return;
    editor.commands.setContent(value, { emitUpdate: false });
    start(shownOf(editor));
  }, [editor, value]);
  useEffect(() => {
    editor?.setOptions({ editorProps: { attributes } });
  }, [editor, invalid, label, language]);
  return (
    <RichTextEditor editor={editor} labels={consoleLanguage === 'ar' ? ARABIC_LABELS : DEFAULT_LABELS} dir={attributes.dir}>
      <RichTextEditor.Toolbar>
        <RichTextEditor.ControlsGroup>
          <RichTextEditor.Bold />
          <RichTextEditor.Italic />
          <RichTextEditor.Strikethrough />
          <RichTextEditor.ClearFormatting />
        </RichTextEditor.ControlsGroup>
        <RichTextEditor.ControlsGroup>
          <RichTextEditor.H2 />
          <RichTextEditor.H3 />
          <RichTextEditor.BulletList />
          <RichTextEditor.OrderedList />
          <RichTextEditor.Blockquote />
        </RichTextEditor.ControlsGroup>
        <RichTextEditor.ControlsGroup>
          <RichTextEditor.Link />
          <RichTextEditor.Unlink />
        </RichTextEditor.ControlsGroup>
      </RichTextEditor.Toolbar>
      <RichTextEditor.Content />
    </RichTextEditor>
  );
}
