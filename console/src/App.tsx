import { lazy, ReactNode, Suspense, useEffect, useRef, useState } from 'react';
import { AppShell, Button, Group, NavLink, Stack, Text, Title, useDirection } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, dataOr, TOKEN_KEY } from './api/client';
import { COMMON, directionOf, Language, LanguageContext } from './i18n';
import { BASE, match, navigate, Redirect, usePath } from './router';
import { Session, SessionContext, sessionOf } from './session';
import { SignIn } from './directory/SignIn';
import { Loading } from './ui/bits';
import { ProblemAlert } from './ui/ProblemAlert';

// Each domain's screens load when first opened: the first screen carries only the shell and the sign-in.
const ServicesScreen = lazy(() => import('./deploy/ServicesScreen').then((module) => ({ default: module.ServicesScreen })));
const ServiceScreen = lazy(() => import('./deploy/ServiceScreen').then((module) => ({ default: module.ServiceScreen })));
const DeployScreen = lazy(() => import('./deploy/DeployScreen').then((module) => ({ default: module.DeployScreen })));
const ArchivingScreen = lazy(() => import('./archival/ArchivingScreen').then((module) => ({ default: module.ArchivingScreen })));
const ApprovalsScreen = lazy(() => import('./approvals/ApprovalsScreen').then((module) => ({ default: module.ApprovalsScreen })));
const ContentScreen = lazy(() => import('./content/ContentScreen').then((module) => ({ default: module.ContentScreen })));
const ReleasesScreen = lazy(() => import('./content/ReleasesScreen').then((module) => ({ default: module.ReleasesScreen })));
const ScheduledScreen = lazy(() => import('./content/Scheduled').then((module) => ({ default: module.ScheduledScreen })));
const EmailScreen = lazy(() => import('./messaging/EmailScreen').then((module) => ({ default: module.EmailScreen })));
const ChannelsScreen = lazy(() => import('./messaging/ChannelsScreen').then((module) => ({ default: module.ChannelsScreen })));
const HealthScreen = lazy(() => import('./operations/HealthScreen').then((module) => ({ default: module.HealthScreen })));
const SuppressionsScreen = lazy(() => import('./messaging/SuppressionsScreen').then((module) => ({ default: module.SuppressionsScreen })));

const SECTIONS = {
  en: {
    services: 'Infrastructure → Services',
    deploy: 'Infrastructure → Deploy Service',
    archiving: 'Governance → Archiving',
    approvals: 'Approvals',
    content: 'Content',
    releases: 'Releases',
    scheduled: 'Scheduled',
    email: 'Email templates',
    channels: 'Email and SMS channels',
    suppressions: 'Suppression list',
    health: 'Health',
    notFound: 'No such screen.',
  },
  ar: {
    services: 'البنية التحتية ← الخدمات',
    deploy: 'البنية التحتية ← نشر خدمة',
    archiving: 'الحوكمة ← الأرشفة',
    approvals: 'الموافقات',
    content: 'المحتوى',
    releases: 'الإصدارات',
    scheduled: 'المجدول',
    email: 'قوالب البريد',
    channels: 'قنوات البريد والرسائل',
    suppressions: 'قائمة العناوين الموقوفة',
    health: 'الصحة',
    notFound: 'لا توجد شاشة كهذه.',
  },
};

type Section = Exclude<keyof typeof SECTIONS.en, 'notFound'>;

/**
 * Which sections a user is shown. The API decides what they may do; the console only leaves out what would
 * answer 403 (a VIEWER reads content and templates; infrastructure and archiving are ADMIN's), and a
 * section opened by URL anyway shows the API's refusal.
 */
function sectionsFor(session: Session): Section[] {
  const shown: Section[] = [];
  if (session.isAdmin) shown.push('services', 'deploy', 'archiving');
  if (session.canDecide || session.canEdit) shown.push('approvals');
  shown.push('content', 'releases');
  if (session.canEdit) shown.push('scheduled');
  shown.push('email');
  if (session.isAdmin) shown.push('channels', 'suppressions', 'health');
  return shown;
}

const PATHS: Record<Section, string> = {
  services: '/services',
  deploy: '/deploy',
  archiving: '/archiving',
  approvals: '/approvals',
  content: '/content',
  releases: '/releases',
  scheduled: '/scheduled',
  email: '/email',
  channels: '/channels',
  suppressions: '/suppressions',
  health: '/health',
};

function Screen({ path, session, notFound }: { path: string; session: Session; notFound: string }): ReactNode {
  // The console's root is the first section the user has, as the address too.
  if (path === '/') return <Redirect to={PATHS[sectionsFor(session)[0]]} />;
  let params: Record<string, string> | null;
  if (path === '/services') return <ServicesScreen />;
  if ((params = match('/services/:name', path))) return <ServiceScreen name={params.name} />;
  if (path === '/deploy') return <DeployScreen />;
  if (path === '/archiving') return <ArchivingScreen />;
  if (path === '/approvals') return <ApprovalsScreen />;
  if (path === '/content') return <ContentScreen />;
  if ((params = match('/content/:type', path))) return <ContentScreen type={params.type} />;
  if ((params = match('/content/:type/:id', path))) return <ContentScreen type={params.type} id={params.id} />;
  if (path === '/releases') return <ReleasesScreen />;
  if ((params = match('/releases/:id', path))) return <ReleasesScreen id={params.id} />;
  if (path === '/scheduled') return <ScheduledScreen />;
  if (path === '/email') return <EmailScreen />;
  if ((params = match('/email/:id', path))) return <EmailScreen id={params.id} />;
  if (path === '/channels') return <ChannelsScreen />;
  if (path === '/suppressions') return <SuppressionsScreen />;
  if (path === '/health') return <HealthScreen />;
  return <Text>{notFound}</Text>;
}

export function App() {
  const [language, setLanguage] = useState<Language>(() => (localStorage.getItem('opsflow.language') === 'ar' ? 'ar' : 'en'));
  const [token, setToken] = useState<string | null>(() => sessionStorage.getItem(TOKEN_KEY));
  const { setDirection } = useDirection();
  const queries = useQueryClient();
  const path = usePath();
  const common = COMMON[language];
  const sections = SECTIONS[language];
  useEffect(() => {
    document.documentElement.lang = language;
    document.documentElement.dir = directionOf(language);
    document.title = common.title;
    setDirection(directionOf(language));
    localStorage.setItem('opsflow.language', language);
  }, [language, setDirection, common.title]);
  // A sign-in removes the button that had the focus; the sections it opens take the focus, so the keyboard goes on
  // from them rather than from wherever the first screen's list happens to end.
  const sectionsNav = useRef<HTMLDivElement>(null);
  const [focusSections, setFocusSections] = useState(false);
  const changeToken = (next: string | null) => {
    if (next) sessionStorage.setItem(TOKEN_KEY, next);
    else {
      sessionStorage.removeItem(TOKEN_KEY);
      setFocusSections(false);
    }
    queries.clear();
    setToken(next);
  };
  const signIn = (next: string) => {
    changeToken(next);
    setFocusSections(true);
  };
  const me = useQuery({ queryKey: ['me', token], enabled: token !== null, queryFn: async () => dataOr(await api.GET('/api/directory/me')) });
  const session = me.data ? sessionOf(me.data) : null;
  const signedIn = session !== null;
  const refused = me.error !== null;
  useEffect(() => {
    // A token the API refuses opens no sections: nothing is left to focus later, when another signs in.
    if (!focusSections || (!signedIn && !refused)) return;
    if (signedIn) sectionsNav.current?.focus();
    setFocusSections(false);
  }, [focusSections, signedIn, refused]);
  return (
    <LanguageContext.Provider value={language}>
      <AppShell
        transitionDuration={0}
        header={{ height: 56 }}
        navbar={{ width: 260, breakpoint: 'sm', collapsed: { mobile: true, desktop: session === null } }}
        padding="md"
      >
        <AppShell.Header>
          <Group h="100%" px="md" justify="space-between">
            <Title order={1} size="h3">
              {common.title}
            </Title>
            <Group>
              {session && (
                <Text size="sm">
                  {common.signedInAs} {session.me.name || session.me.id}
                </Text>
              )}
              <Button variant="subtle" onClick={() => setLanguage(language === 'en' ? 'ar' : 'en')} lang={language === 'en' ? 'ar' : 'en'}>
                {common.language}
              </Button>
              {token && (
                <Button variant="default" onClick={() => changeToken(null)}>
                  {common.signOut}
                </Button>
              )}
            </Group>
          </Group>
        </AppShell.Header>
        {session && (
          <AppShell.Navbar ref={sectionsNav} tabIndex={-1} p="xs" component="nav" aria-label={common.nav}>
            {sectionsFor(session).map((section) => (
              <NavLink
                key={section}
                variant="filled"
                href={`${BASE}${PATHS[section]}`}
                label={sections[section]}
                active={path === PATHS[section] || path.startsWith(`${PATHS[section]}/`)}
                aria-current={path === PATHS[section] ? 'page' : undefined}
                onClick={(event) => {
                  event.preventDefault();
                  navigate(PATHS[section]);
                }}
              />
            ))}
          </AppShell.Navbar>
        )}
        <AppShell.Main>
          {token === null ? (
            <SignIn onToken={signIn} />
          ) : me.error ? (
            <ProblemAlert error={me.error} />
          ) : !session ? (
            <Loading />
          ) : (
            <SessionContext.Provider value={session}>
              <Suspense fallback={<Loading />}>
                <Stack>
                  <Screen path={path} session={session} notFound={sections.notFound} />
                </Stack>
              </Suspense>
            </SessionContext.Provider>
          )}
        </AppShell.Main>
      </AppShell>
    </LanguageContext.Provider>
  );
}
