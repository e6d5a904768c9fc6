import { createContext, useContext } from 'react';

/** The console's languages; the layout follows the language's direction. */
export type Language = 'en' | 'ar';
export const directionOf = (language: Language) => (language === 'ar' ? 'rtl' : 'ltr');

/** Each screen keeps its own words, in both languages, beside it: `useWords({ en: {...}, ar: {...} })`. */
export type Dictionary<K extends string> = { en: Record<K, string>; ar: Record<K, string> };

export const LanguageContext = createContext<Language>('en');

export function useLanguage(): Language {
  return useContext(LanguageContext);
}

export function useWords<K extends string>(dictionary: Dictionary<K>): Record<K, string> {
  return dictionary[useLanguage()];
}

/**
 * A sentence with its `{slots}` filled: the languages put a name in different places ("Move relay-a up",
 * "انقل relay-a إلى الأعلى"), so each sentence says where.
 */
export function fill(sentence: string, values: Record<string, string | number>): string {
  return sentence.replace(/\{(\w+)\}/g, (slot, name: string) => (name in values ? String(values[name]) : slot));
}

/** Words every screen uses. */
export const COMMON = {
  en: {
    title: 'Opsflow console',
    loading: 'Loading…',
    save: 'Save',
    cancel: 'Cancel',
    confirm: 'Confirm',
    more: 'Load more',
    openInTemporal: 'Open the run in the Temporal Web UI',
    openTraces: "The run's traces",
    signedInAs: 'Signed in as',
    signOut: 'Sign out',
    language: 'العربية',
    nav: 'Console sections',
    none: 'Nothing here yet.',
    site: 'Site',
    status: 'Status',
    when: 'When',
    who: 'Who',
    readOnly: 'Read-only: your roles do not allow changes here.',
    refresh: 'Refresh',
  },
  ar: {
    title: 'وحدة تحكم أوبسفلو',
    loading: 'جارٍ التحميل…',
    save: 'حفظ',
    cancel: 'إلغاء',
    confirm: 'تأكيد',
    more: 'تحميل المزيد',
    openInTemporal: 'افتح التشغيل في واجهة Temporal',
    openTraces: 'تتبّعات التشغيل',
    signedInAs: 'مسجل الدخول باسم',
    signOut: 'تسجيل الخروج',
    language: 'English',
    nav: 'أقسام وحدة التحكم',
    none: 'لا شيء هنا بعد.',
    site: 'الموقع',
    status: 'الحالة',
    when: 'متى',
    who: 'من',
    readOnly: 'للقراءة فقط: أدوارك لا تسمح بالتغيير هنا.',
    refresh: 'تحديث',
  },
} satisfies Dictionary<string>;

/** A time as people read it in the console's language. */
export function useTime(): (iso: string | null | undefined) => string {
  const language = useLanguage();
  return (iso) => (iso ? new Date(iso).toLocaleString(language === 'ar' ? 'ar' : 'en-GB', { dateStyle: 'medium', timeStyle: 'medium' }) : '—');
}

/**
 * What most of the console's components start with: their own words, the words every screen uses, and times
 * as people read them, all in the console's language.
 */
export function useLocalised<K extends string>(
  dictionary: Dictionary<K>,
): { words: Record<K, string>; common: Record<keyof typeof COMMON.en, string>; time: ReturnType<typeof useTime> } {
  return { words: useWords(dictionary), common: useWords(COMMON), time: useTime() };
}
