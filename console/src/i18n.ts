/** The console's own words, in English and Arabic; the layout follows the language's direction. */
export type Language = 'en' | 'ar';

const WORDS = {
  en: {
    title: 'Opsflow console',
    signIn: 'Sign in',
    signInAs: 'Sign in as a directory user (development)',
    pasteToken: 'Or paste a token',
    token: 'Token',
    useToken: 'Use this token',
    signOut: 'Sign out',
    language: 'العربية',
    services: 'Services',
    name: 'Name',
    status: 'Status',
    instances: 'Instances',
    group: 'Dashboard Group',
    noServices: 'No services.',
    loading: 'Loading…',
    signedInAs: 'Signed in as',
  },
  ar: {
    title: 'وحدة تحكم أوبسفلو',
    signIn: 'تسجيل الدخول',
    signInAs: 'الدخول كمستخدم من الدليل (للتطوير)',
    pasteToken: 'أو الصق رمزًا',
    token: 'الرمز',
    useToken: 'استخدم هذا الرمز',
    signOut: 'تسجيل الخروج',
    language: 'English',
    services: 'الخدمات',
    name: 'الاسم',
    status: 'الحالة',
    instances: 'النسخ',
    group: 'مجموعة لوحة التحكم',
    noServices: 'لا توجد خدمات.',
    loading: 'جارٍ التحميل…',
    signedInAs: 'مسجل الدخول باسم',
  },
} as const;

export type Words = { [K in keyof (typeof WORDS)['en']]: string };
export const wordsOf = (language: Language): Words => WORDS[language];
export const directionOf = (language: Language) => (language === 'ar' ? 'rtl' : 'ltr');
