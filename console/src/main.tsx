import '@mantine/core/styles.css';
import '@mantine/tiptap/styles.css';
import '@mantine/dropzone/styles.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createTheme, CSSVariablesResolver, DirectionProvider, MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { App } from './App';

// A darker primary shade: white on it, and it on white, keep WCAG AA contrast (axe checks every screen).
const theme = createTheme({ primaryShade: 9, autoContrast: true });
// Mantine's error red (red.6) on white falls short of AA for a field's error text; red.9 does not.
const darkerErrors: CSSVariablesResolver = () => ({ variables: {}, light: { '--mantine-color-error': 'var(--mantine-color-red-9)' }, dark: {} });

const queries = new QueryClient({ defaultOptions: { queries: { retry: false } } });

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <DirectionProvider>
      <MantineProvider theme={theme} cssVariablesResolver={darkerErrors}>
        <QueryClientProvider client={queries}>
          <App />
        </QueryClientProvider>
      </MantineProvider>
    </DirectionProvider>
  </StrictMode>,
);
