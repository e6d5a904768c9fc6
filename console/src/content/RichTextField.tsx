import { useEffect, useState } from 'react';
import { Checkbox, Group, Input, Textarea } from '@mantine/core';
import { DEFAULT_LABELS, Link, RichTextEditor } from '@mantine/tiptap';
import { useEditor } from '@tiptap/react';
import StarterKit from '@tiptap/starter-kit';
import { useLanguage, useWords } from '../i18n';

const WORDS = {
  en: { source: 'HTML source', html: 'HTML' },
  ar: { source: 'مصدر HTML', html: 'HTML' },
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
 * A rich-text field: a visual editor, or the HTML source as typed. The editor writes only what the editor
 * changes: a stored text it was never touched keeps its markup byte for byte, even markup the editor would
 * rewrite (a class, an iframe), and the source view keeps any markup at all.
 */
export function RichTextField({ label, value, language, error, onChange }: Props) {
  const words = useWords(WORDS);
  const [source, setSource] = useState(false);
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
        <VisualEditor label={label} value={value} language={language} invalid={Boolean(error)} onChange={onChange} />
      )}
    </Input.Wrapper>
  );
}

function VisualEditor({ label, value, language, invalid, onChange }: Omit<Props, 'error'> & { invalid: boolean }) {
  const consoleLanguage = useLanguage();
  const attributes = {
    'aria-label': label,
    'aria-multiline': 'true',
    'aria-invalid': String(invalid),
    role: 'textbox',
    dir: language === 'ar' ? 'rtl' : 'ltr',
    lang: language,
  };
  const editor = useEditor({
    extensions: [StarterKit.configure({ link: false }), Link],
    content: value,
    editorProps: { attributes },
    // An emptied editor holds `<p></p>`: stored as empty, so a read in the other language falls back to it.
    onUpdate: ({ editor: changed }) => onChange(changed.isEmpty ? '' : changed.getHTML()),
  });
  // A value changed from outside (a revision restored) is shown; the editor's own echo is not re-applied.
  useEffect(() => {
    if (!editor) return;
    const shown = editor.isEmpty ? '' : editor.getHTML();
    if (value !== shown) editor.commands.setContent(value, { emitUpdate: false });
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
