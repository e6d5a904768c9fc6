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
    // No `any` flows through the product: rows are typed (typed knex tables, rawRows), answers and inputs by schema.
    files: ['**/*.ts'],
    ignores: ['test/**', '**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'error',
      '@typescript-eslint/no-unsafe-member-access': 'error',
      '@typescript-eslint/no-unsafe-call': 'error',
      '@typescript-eslint/no-unsafe-return': 'error',
      '@typescript-eslint/no-unsafe-argument': 'error',
    },
  },
  {
    files: ['test/**/*.ts', '**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  // Arrows run one way: api -> workflows/*/definitions and data; workers -> activities -> data -> domain -> lib.
  // Each layer below names what it must not reach back up to (test/foundation/layers.test.ts shows a wrong-way
  // import failing).
  {
    // Workflows must stay deterministic: no Node built-ins, no database, no logger; activities as types only;
    // nothing of the platform but the domain vocabulary.
    files: ['workflows/**/*.ts'],
    ignores: ['workflows/**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: NODE_BUILTINS.flatMap((name) => [name, `node:${name}`]).map((name) => ({ name, message: 'Workflows run in a deterministic sandbox.' })),
          patterns: [
            { group: ['**/data/**', '**/adapters/**', '**/lib/logger', 'pino', 'knex', 'pg', 'dockerode', 'nodemailer'], message: 'Workflows do no I/O; call an activity.' },
            { group: ['**/api/**', '**/workers/**', '**/temporal-config/**', '**/scripts/**', '**/lib/**'], message: 'Workflows import only the domain vocabulary and the SDK.' },
            { group: ['**/activities/**'], allowTypeImports: true, message: 'Import activities as types only.' },
          ],
        },
      ],
    },
  },
  {
    files: ['api/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/activities/**', '**/workers/**'], message: 'The API does not run activities: put shared I/O in data/.' },
            { regex: '(^|/)workflows/(?![a-z-]+/definitions$)', message: 'The API starts workflows by type name: import only workflows/<domain>/definitions.' },
          ],
        },
      ],
    },
  },
  {
    files: ['activities/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [{ group: ['**/api/**', '**/workers/**'], message: 'Activities sit below the API and the workers.' }] }],
    },
  },
  {
    files: ['data/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/workflows/**', '**/activities/**', '**/api/**', '**/workers/**', '**/temporal-config/**'], message: 'data/ uses only the domain vocabulary and lib/.' },
          ],
        },
      ],
    },
  },
  {
    // The clients of outside systems sit beside data/: the layers above call them, they call none of those layers.
    files: ['adapters/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/workflows/**', '**/activities/**', '**/api/**', '**/workers/**', '**/temporal-config/**', '**/scripts/**'], message: 'adapters/ uses only the domain vocabulary and lib/.' },
          ],
        },
      ],
    },
  },
  {
    files: ['domain/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [{ group: ['../**'], message: 'The domain vocabulary imports nothing of the platform.' }] }],
    },
  },
);
