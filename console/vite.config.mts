import { defineConfig } from 'vite';

/** The console, built into console/dist and served by the API at /console. */
export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  logLevel: 'warn',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    chunkSizeWarningLimit: 2000,
    rollupOptions: {
      // Mantine marks its modules "use client" (for React Server Components); a client-only bundle drops it.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
});
