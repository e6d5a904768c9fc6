import { Badge, Group, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useWords } from '../i18n';
import { ProblemAlert } from '../ui/ProblemAlert';
import { problemOf } from '../api/client';
import { bodySchemaOf, useOpenApi } from './ContentForm';

const WORDS = {
  en: {
    heading: 'What visitors read',
    en: 'Read in English',
    ar: 'Read in Arabic',
    fromEn: 'from the English',
    fromAr: 'from the Arabic',
    empty: '(empty)',
  },
  ar: {
    heading: 'ما يقرؤه الزوار',
    en: 'بالإنجليزية',
    ar: 'بالعربية',
    fromEn: 'من النص الإنجليزي',
    fromAr: 'من النص العربي',
    empty: '(فارغ)',
  },
};

interface PublicRead {
  data?: Record<string, Record<'en' | 'ar', string> | unknown>;
  fallbacks?: string[];
}

/** One language's published read: each bilingual text, marked where it came from the other language. */
function Read({ url, locale, fields, rev }: { url: string; locale: 'en' | 'ar'; fields: string[]; rev: unknown }) {
  const words = useWords(WORDS);
  const read = useQuery({
    queryKey: ['public-read', url, locale, rev],
    queryFn: async () => {
      const answer = await fetch(`${url}?locale=${locale}`);
      if (!answer.ok) throw await problemOf(answer);
      return (await answer.json()) as PublicRead;
    },
  });
  if (read.error) return <ProblemAlert error={read.error} />;
  const fallbacks = new Set(read.data?.fallbacks ?? []);
  return (
    <Paper withBorder p="sm" aria-label={words[locale]} role="region">
      <Title order={4}>{words[locale]}</Title>
      <Stack gap={4} mt="xs" dir={locale === 'ar' ? 'rtl' : 'ltr'} lang={locale}>
        {fields.map((field) => {
          const text = (read.data?.data?.[field] as Record<string, string> | undefined)?.[locale] ?? '';
          const fellBack = fallbacks.has(`/data/${field}/${locale}`);
          return (
            <Group key={field} gap="xs" wrap="nowrap" align="start" data-testid={`read-${locale}-${field}`}>
              <Text size="sm" fw={600} dir="ltr">
                {field}
              </Text>
              <Text size="sm" lineClamp={3}>
                {text || words.empty}
              </Text>
              {fellBack && (
                <Badge size="sm" color="orange" variant="light" c="black" data-testid="fallback">
                  {locale === 'ar' ? words.fromEn : words.fromAr}
                </Badge>
              )}
            </Group>
          );
        })}
      </Stack>
    </Paper>
  );
}

/**
 * For published content served to visitors: the page as read in each language, each bilingual text
 * marked where the site's fallback took it from the other language.
 */
export function PublishedReads({
  type,
  collection,
  siteId,
  snapshot,
  publishedRev,
}: {
  publishedRev: number | null;
  type: string;
  collection: string;
  siteId: string;
  snapshot: Record<string, unknown> | null;
}) {
  const words = useWords(WORDS);
  const openapi = useOpenApi();
  const served = openapi.data?.paths[`/api/public/sites/{siteId}/${type}/{slug}`] !== undefined;
  const data = bodySchemaOf(openapi.data, collection, 'post')?.properties?.data;
  const fields = Object.entries(data?.properties ?? {})
    .filter(([, schema]) => schema['x-bilingual'])
    .map(([name]) => name);
  if (!served || !snapshot || typeof snapshot.slug !== 'string' || fields.length === 0) return null;
  const url = `/api/public/sites/${encodeURIComponent(siteId)}/${type}/${encodeURIComponent(snapshot.slug)}`;
  return (
    <Stack gap="xs">
      <Title order={3}>{words.heading}</Title>
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Read url={url} locale="en" fields={fields} rev={publishedRev} />
        <Read url={url} locale="ar" fields={fields} rev={publishedRev} />
      </SimpleGrid>
    </Stack>
  );
}
