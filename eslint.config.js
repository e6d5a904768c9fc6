// @ts-check
const js = require('@eslint/js');
const tseslint = require('typescript-eslint');

const NODE_BUILTINS = ['fs', 'path', 'os', 'crypto', 'http', 'https', 'net', 'child_process', 'stream', 'util', 'zlib', 'url', 'events'];

module.exports = tseslint.config(
  { ignores: ['node_modules/**', '.data/**', '.tools/**', 'coverage/**', '**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: __dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['test/**/*.ts', '**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    // Workflows must stay deterministic: no Node built-ins, no database, no logger; activities as types only.
    files: ['workflows/**/*.ts'],
    ignores: ['workflows/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: NODE_BUILTINS.flatMap((name) => [name, `node:${name}`]).map((name) => ({ name, message: 'Workflows run in a deterministic sandbox.' })),
          patterns: [
            { group: ['**/data/**', '**/lib/logger', 'pino', 'knex', 'pg', 'dockerode', 'nodemailer'], message: 'Workflows do no I/O; call an activity.' },
            { group: ['**/activities/**'], allowTypeImports: true, message: 'Import activities as types only.' },
          ],
        },
      ],
    },
  },
);
