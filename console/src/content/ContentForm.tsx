import { useState } from 'react';
import { Button, Checkbox, Fieldset, Group, NativeSelect, SimpleGrid, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { ProblemError } from '../api/client';
import { fill, useWords } from '../i18n';
import { READABLE_DESCRIPTION } from '../ui/bits';
import { RichTextField } from './RichTextField';

/** A JSON Schema as the API's OpenAPI document gives it, with the platform's own `x-` keywords. */
export interface FieldSchema {
  type?: string;
  format?: string;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  description?: string;
  const?: unknown;
  anyOf?: FieldSchema[];
  properties?: Record<string, FieldSchema>;
  required?: string[];
  additionalProperties?: boolean | FieldSchema;
  items?: FieldSchema;
  'x-bilingual'?: boolean;
  'x-format'?: string;
  'x-free-json'?: boolean;
}

interface OpenApi {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: FieldSchema }> } }>>;
}

/** The API's OpenAPI document, read once: the forms are built from the same schemas the API validates with. */
export function useOpenApi() {
  return useQuery({
    queryKey: ['openapi'],
    staleTime: Infinity,
    queryFn: async () => (await (await fetch('/api/openapi.json')).json()) as OpenApi,
  });
}

/** The JSON body a route takes, from the document. */
export function bodySchemaOf(openapi: OpenApi | undefined, path: string, method: 'post' | 'put'): FieldSchema | undefined {
  return openapi?.paths[path]?.[method]?.requestBody?.content['application/json']?.schema;
}

const WORDS = {
  en: {
    english: 'English',
    arabic: 'Arabic',
    json: 'JSON',
    other: 'Other fields',
    unset: '—',
    notJson: 'is not valid JSON',
    list: 'comma-separated',
    add: 'Add to {name}',
    remove: 'Remove {name} {n}',
  },
  ar: {
    english: 'الإنجليزية',
    arabic: 'العربية',
    json: 'JSON',
    other: 'حقول أخرى',
    unset: '—',
    notJson: 'ليس JSON صالحًا',
    list: 'مفصولة بفواصل',
    add: 'أضف إلى {name}',
    remove: 'أزل {name} {n}',
  },
};

/** Code (JSON, HTML) in a fixed-width face; the label stays in the screen's own. */
const MONOSPACE_INPUT = { input: { fontFamily: 'var(--mantine-font-family-monospace)' } };

/** `refreshSeconds` → "Refresh seconds". */
const labelOf = (name: string) => {
  const words = name.replace(/([A-Z])/g, ' $1').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** A union of constants: a choice. A union with null: the other branch, which may be left empty. */
const choicesOf = (schema: FieldSchema) => schema.anyOf?.filter((branch) => branch.const !== undefined).map((branch) => String(branch.const));
const withoutNull = (schema: FieldSchema): FieldSchema => {
  const branches = schema.anyOf?.filter((branch) => branch.type !== 'null');
  return branches && branches.length === 1 && branches.length < schema.anyOf!.length ? branches[0] : schema;
};
/** A list the form can edit field by field: of texts, or of objects with named fields. */
const isTypedList = (schema: FieldSchema) =>
  schema.type === 'array' && (schema.items?.type === 'string' || (schema.items?.type === 'object' && schema.items.properties !== undefined));
const isFreeJson = (schema: FieldSchema) =>
  schema['x-free-json'] === true ||
  (!schema.type && !schema.anyOf) ||
  (schema.type === 'array' && !isTypedList(schema)) ||
  (schema.type === 'object' && !schema.properties);

/** The field paths of a problem's issues (`body.data.heading.ar` → `data.heading.ar`), with their messages. */
export function issuesByField(error: unknown): Record<string, string> {
  if (!(error instanceof ProblemError)) return {};
  return Object.fromEntries((error.problem.errors ?? []).map((issue) => [issue.path.replace(/^body\.?/, ''), issue.message]));
}

/** The message for a field: its own, or the first of anything inside it. */
const messageFor = (issues: Record<string, string>, path: string) =>
  issues[path] ?? Object.entries(issues).find(([where]) => where.startsWith(`${path}.`))?.[1];

interface FieldProps {
  name: string;
  path: string;
  schema: FieldSchema;
  value: unknown;
  onChange: (value: unknown) => void;
  issues: Record<string, string>;
  /** JSON text being typed, kept apart from the value until it parses. */
  drafts: Record<string, string>;
  setDraft: (path: string, text: string | undefined) => void;
}

function JsonField({ name, path, value, onChange, issues, drafts, setDraft, label }: FieldProps & { label: string }) {
  const words = useWords(WORDS);
  const text = drafts[path] ?? (value === undefined ? '' : JSON.stringify(value, null, 2));
  let error = messageFor(issues, path);
  try {
    if (text.trim() !== '') JSON.parse(text);
  } catch {
    error = words.notJson;
  }
  return (
    <Textarea
      label={`${label} (${words.json})`}
      name={name}
      value={text}
      error={error}
      autosize
      minRows={2}
      dir="ltr"
      styles={MONOSPACE_INPUT}
      onChange={(event) => {
        const typed = event.currentTarget.value;
        setDraft(path, typed);
        try {
          onChange(typed.trim() === '' ? undefined : JSON.parse(typed));
        } catch {
          // Kept as text until it parses; the form will not submit meanwhile.
        }
      }}
    />
  );
}

/** One field, with the input its schema asks for. */
function Field(props: FieldProps) {
  const words = useWords(WORDS);
  const { name, path, value, onChange, issues } = props;
  const schema = withoutNull(props.schema);
  const label = labelOf(name);
  if (schema['x-bilingual']) {
    // A text stored before the field was typed (a plain string) starts over as English.
    const both = (value && typeof value === 'object' ? value : { en: typeof value === 'string' ? value : '', ar: '' }) as { en?: string; ar?: string };
    const languageLabel = (language: 'en' | 'ar') => `${label} · ${language === 'en' ? words.english : words.arabic}`;
    if (schema['x-format'] === 'html') {
      return (
        <SimpleGrid cols={{ base: 1, sm: 2 }} data-field={path}>
          {(['en', 'ar'] as const).map((language) => (
            <RichTextField
              key={language}
              label={languageLabel(language)}
              value={both[language] ?? ''}
              language={language}
              error={messageFor(issues, `${path}.${language}`)}
              onChange={(html) => onChange({ ...both, [language]: html })}
            />
          ))}
        </SimpleGrid>
      );
    }
    const Input = (schema.properties?.en?.maxLength ?? 0) > 500 ? Textarea : TextInput;
    return (
      <SimpleGrid cols={{ base: 1, sm: 2 }} data-field={path}>
        {(['en', 'ar'] as const).map((language) => (
          <Input
            key={language}
            label={languageLabel(language)}
            value={both[language] ?? ''}
            dir={language === 'ar' ? 'rtl' : 'ltr'}
            lang={language}
            error={messageFor(issues, `${path}.${language}`)}
            {...(Input === Textarea ? { autosize: true, minRows: 2 } : {})}
            onChange={(event: { currentTarget: { value: string } }) => onChange({ ...both, [language]: event.currentTarget.value })}
          />
        ))}
      </SimpleGrid>
    );
  }
  const choices = choicesOf(schema);
  if (choices && choices.length > 0) {
    return (
      <NativeSelect
        label={label}
        data={[{ value: '', label: words.unset }, ...choices.map((choice) => ({ value: choice, label: choice }))]}
        value={value === undefined || value === null ? '' : String(value)}
        error={messageFor(issues, path)}
        onChange={(event) => onChange(event.currentTarget.value === '' ? undefined : event.currentTarget.value)}
      />
    );
  }
  if (schema.type === 'object' && schema.properties) return <ObjectFields {...props} schema={schema} legend={label} />;
  if (isTypedList(schema)) return <ListField {...props} schema={schema} label={label} />;
  if (isFreeJson(schema)) return <JsonField {...props} label={label} />;
  if (schema.type === 'boolean')
    return <Checkbox label={label} checked={value === true} onChange={(event) => onChange(event.currentTarget.checked)} error={messageFor(issues, path)} />;
  if (schema.type === 'integer' || schema.type === 'number') {
    return (
      <TextInput
        label={label}
        type="number"
        min={schema.minimum}
        max={schema.maximum}
        value={value === undefined || value === null ? '' : String(value)}
        error={messageFor(issues, path)}
        dir="ltr"
        onChange={(event) => onChange(event.currentTarget.value === '' ? undefined : Number(event.currentTarget.value))}
      />
    );
  }
  const type = schema.format === 'date' ? 'date' : schema.format === 'email' ? 'email' : schema.format === 'date-time' ? 'datetime-local' : 'text';
  const Input = (schema.maxLength ?? 0) > 2000 ? Textarea : TextInput;
  return (
    <Input
      label={label}
      type={type}
      value={value === undefined || value === null ? '' : String(value)}
      error={messageFor(issues, path)}
      description={schema.description}
      descriptionProps={READABLE_DESCRIPTION}
      onChange={(event: { currentTarget: { value: string } }) => onChange(event.currentTarget.value)}
      {...(Input === Textarea ? { autosize: true, minRows: 3 } : {})}
    />
  );
}

/** A list: texts as one comma-separated input; objects each in a fieldset of their own, added and removed. */
function ListField(props: FieldProps & { label: string }) {
  const words = useWords(WORDS);
  const { schema, path, value, onChange, issues, label } = props;
  const items = Array.isArray(value) ? (value as unknown[]) : [];
  if (schema.items!.type === 'string') {
    return (
      <TextInput
        label={`${label} (${words.list})`}
        value={items.join(', ')}
        dir="ltr"
        error={messageFor(issues, path)}
        onChange={(event) => {
          const texts = event.currentTarget.value
            .split(',')
            .map((text) => text.trim())
            .filter((text) => text !== '');
          onChange(texts.length > 0 ? texts : undefined);
        }}
      />
    );
  }
  const set = (index: number, item: unknown) => onChange(items.map((current, at) => (at === index ? item : current)));
  return (
    <Fieldset legend={label}>
      <Stack gap="xs">
        {items.map((item, index) => (
          <Fieldset key={index} legend={`${label} ${index + 1}`}>
            <ObjectFields {...props} schema={schema.items!} path={`${path}.${index}`} value={item} onChange={(next) => set(index, next)} />
            <Button
              mt="xs"
              size="compact-xs"
              variant="default"
              onClick={() => onChange(items.filter((_, at) => at !== index))}
              aria-label={fill(words.remove, { name: label, n: index + 1 })}
            >
              {fill(words.remove, { name: label, n: index + 1 })}
            </Button>
          </Fieldset>
        ))}
        {messageFor(issues, path) && (
          <Text size="sm" c="var(--mantine-color-error)">
            {messageFor(issues, path)}
          </Text>
        )}
        <Group>
          <Button size="compact-sm" variant="light" onClick={() => onChange([...items, {}])}>
            {fill(words.add, { name: label })}
          </Button>
        </Group>
      </Stack>
    </Fieldset>
  );
}

/** An object's named fields, and its other keys as one JSON field when the schema allows them. */
function ObjectFields(props: FieldProps & { legend?: string }) {
  const words = useWords(WORDS);
  const { schema, path, value, onChange, legend } = props;
  const object = (value ?? {}) as Record<string, unknown>;
  const named = Object.keys(schema.properties ?? {});
  const others = Object.fromEntries(Object.entries(object).filter(([key]) => !named.includes(key)));
  const set = (key: string, inner: unknown) => {
    const next = { ...object };
    if (inner === undefined) delete next[key];
    else next[key] = inner;
    onChange(next);
  };
  const fields = (
    <Stack gap="xs">
      {named.map((key) => (
        <Field
          key={key}
          {...props}
          name={key}
          path={path ? `${path}.${key}` : key}
          schema={schema.properties![key]}
          value={object[key]}
          onChange={(inner) => set(key, inner)}
        />
      ))}
      {schema.additionalProperties !== false && schema.additionalProperties !== undefined && path !== '' && (
        <JsonField
          {...props}
          name={`${path}-other`}
          path={`${path}.*`}
          label={words.other}
          value={Object.keys(others).length > 0 ? others : undefined}
          onChange={(extra) =>
            onChange({ ...Object.fromEntries(named.filter((key) => key in object).map((key) => [key, object[key]])), ...((extra as object) ?? {}) })
          }
        />
      )}
    </Stack>
  );
  return legend ? <Fieldset legend={legend}>{fields}</Fieldset> : fields;
}

/**
 * A component's form, built from its create or edit body schema: every field but those the screen asks for
 * itself (`omit`). The API's validation issues show on the field they name.
 */
export function SchemaFields({
  schema,
  omit,
  value,
  onChange,
  error,
  drafts,
  setDraft,
}: {
  schema: FieldSchema;
  omit: string[];
  value: Record<string, unknown>;
  onChange: (value: Record<string, unknown>) => void;
  error: unknown;
} & JsonDrafts) {
  const shown: FieldSchema = { ...schema, properties: Object.fromEntries(Object.entries(schema.properties ?? {}).filter(([key]) => !omit.includes(key))) };
  return (
    <ObjectFields
      name=""
      path=""
      schema={{ ...shown, additionalProperties: false }}
      value={value}
      onChange={(next) => onChange(next as Record<string, unknown>)}
      issues={issuesByField(error)}
      drafts={drafts}
      setDraft={setDraft}
    />
  );
}

/** The JSON fields' text as typed, kept by the screen so it can hold back a submit while one does not parse. */
export interface JsonDrafts {
  drafts: Record<string, string>;
  setDraft: (path: string, text: string | undefined) => void;
}

export function useJsonDrafts(): JsonDrafts & { invalid: boolean; reset: () => void } {
  const [drafts, setDrafts] = useState<Record<string, string>>({});
  const invalid = Object.values(drafts).some((text) => {
    try {
      if (text.trim() !== '') JSON.parse(text);
      return false;
    } catch {
      return true;
    }
  });
  return { drafts, setDraft: (path, text) => setDrafts((current) => ({ ...current, [path]: text ?? '' })), invalid, reset: () => setDrafts({}) };
}
