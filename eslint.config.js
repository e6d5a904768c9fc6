// @ts-check
const js = require('@eslint/js');
const tseslint = require('typescript-eslint');

const NODE_BUILTINS = ['fs', 'path', 'os', 'crypto', 'http', 'https', 'net', 'child_process', 'stream', 'util', 'zlib', 'url', 'events'];

/** What a module loads is known before it runs. */
const NO_DYNAMIC_IMPORT = { selector: 'ImportExpression', message: 'No dynamic import(): import at the top, so every arrow is visible.' };

/** What data/, adapters/ and edge/ must not import: the layers that call them. */
const ABOVE_THE_DATA = ['**/workflows', '**/workflows/**', '**/activities/**', '**/api/**', '**/workers/**', '**/temporal-config/**'];

/** The engine's methods that only read: anything else on a dockerode object changes the engine. */
const ENGINE_READS = /^(inspect|list\w*|logs|stats|top|ping|info|version|df|changes|history|get\w+)$/;

/**
 * Only the deployments worker changes the Docker engine (docs/security.md): the API reads it. A method of a
 * dockerode object (its type comes from @types/dockerode, or docker-modem's raw requests) that is not a read
 * is refused, called or only taken (`Reflect.apply(container.update, …)`), by name or by a computed key, on a
 * type that may also be undefined or a union. Under compose the API's socket proxy refuses every write too.
 */
const noEngineWrites = {
  meta: {
    type: 'problem',
    schema: [],
    messages: { write: 'The API never changes the Docker engine: `{{name}}` belongs in an activity of the deployments worker.' },
  },
  create(context) {
    const services = context.sourceCode.parserServices;
    const checker = services.program.getTypeChecker();
    const declaredByDocker = (type) =>
      [type.getSymbol(), type.aliasSymbol].some((symbol) =>
        (symbol?.getDeclarations() ?? []).some((declaration) => /[\\/]@types[\\/](dockerode|docker-modem)[\\/]/.test(declaration.getSourceFile().fileName)),
      );
    const partsOf = (type) => (type.isUnion() || type.isIntersection() ? type.types : [type]);
    const isDockerObject = (node) =>
      partsOf(checker.getNonNullableType(checker.getTypeAtLocation(services.esTreeNodeToTSNodeMap.get(node)))).some((part) =>
        declaredByDocker(checker.getApparentType(part)),
      );
    const isMethod = (node) => checker.getNonNullableType(checker.getTypeAtLocation(services.esTreeNodeToTSNodeMap.get(node))).getCallSignatures().length > 0;
    return {
      MemberExpression(node) {
        const name = node.computed ? (node.property.type === 'Literal' ? String(node.property.value) : '[computed]') : node.property.name;
        if (ENGINE_READS.test(name) || !isDockerObject(node.object)) return;
        if (isMethod(node)) context.report({ node: node.property, messageId: 'write', data: { name } });
      },
    };
  },
};

/** The folders of product code, which the size limits apply to. */
const PRODUCT_CODE = ['api', 'workflows', 'activities', 'adapters', 'data', 'domain', 'edge', 'lib', 'scripts', 'workers', 'temporal-config'].map(
  (folder) => `${folder}/**/*.ts`,
);
const SIZE_RULES = {
  'max-lines': ['error', { max: 400 }],
  'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
};
/** Over a size limit on 2026-12-05, when the limits came in (#61). */
const SIZE_DEBT = [];

module.exports = tseslint.config(
  { ignores: ['node_modules/**', '.data/**', '.tools/**', 'coverage/**', 'dist/**', '**/*.js'] },
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
            {
              group: ['**/data/**', '**/adapters/**', '**/lib/logger', 'pino', 'knex', 'pg', 'dockerode', 'nodemailer'],
              message: 'Workflows do no I/O; call an activity.',
            },
            {
              group: ['**/api/**', '**/workers/**', '**/temporal-config/**', '**/scripts/**', '**/lib/**'],
              message: 'Workflows import only the domain vocabulary and the SDK.',
            },
            { group: ['**/activities/**'], allowTypeImports: true, message: 'Import activities as types only.' },
          ],
        },
      ],
    },
  },
  {
    files: ['api/**/*.ts'],
    ignores: ['**/*.test.ts'],
    plugins: { opsflow: { rules: { 'no-engine-writes': noEngineWrites } } },
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/activities/**', '**/workers/**'], message: 'The API does not run activities: put shared I/O in data/.' },
            // The bare folder too: workflows/index re-exports every workflow body.
            {
              regex: '(^|/)workflows(/index)?$|(^|/)workflows/(?![a-z-]+/definitions$)',
              message: 'The API starts workflows by type name: import only workflows/<domain>/definitions.',
            },
            { group: ['knex', 'pg'], message: 'SQL lives in data/: the API calls its repositories.' },
            // The deploy adapters' functions the API may call, all reads: the rule below sees only calls made here,
            // and scripts/ (npm start's launchers) change the engine too.
            {
              group: ['**/adapters/deploy/*'],
              allowImportNames: [
                'baseImageState',
                'readContainerLimits',
                'followLog',
                'followServiceLog',
                'lastLogLines',
                'lastServiceLogLines',
                'taskLogLine',
              ],
              allowTypeImports: true,
              message:
                'The API never changes the Docker engine: that is the deployments worker’s (or npm start’s). Only the adapters’ reads are imported here.',
            },
            { group: ['**/scripts/**'], message: 'The API never changes the Docker engine: npm start’s launchers do.' },
          ],
        },
      ],
      'opsflow/no-engine-writes': 'error',
    },
  },
  {
    files: ['activities/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/api/**', '**/workers/**', '**/workflows', '**/workflows/**'],
              message: 'Activities sit below the API, the workers and the workflows: shared types live in domain/.',
            },
          ],
        },
      ],
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
            {
              group: [...ABOVE_THE_DATA, '**/adapters/**', '**/edge/**'],
              message: 'data/ uses only the domain vocabulary and lib/.',
            },
            { group: ['dockerode', 'nodemailer', 'undici'], message: 'data/ speaks SQL only: outside systems are adapters/.' },
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
            {
              group: [...ABOVE_THE_DATA, '**/scripts/**', '**/edge/**'],
              message: 'adapters/ uses only the domain vocabulary and lib/.',
            },
            // Types of data/'s rows are shared; its queries are not.
            { group: ['knex', 'pg'], message: 'adapters/ never touches SQL: the caller passes what to record.' },
            { group: ['**/data/**'], allowTypeImports: true, message: 'adapters/ never touches SQL: import data/ rows as types only.' },
          ],
        },
      ],
    },
  },
  {
    // The edge: Envoy's configuration, files, admin and control plane. The API hands it the registry.
    files: ['edge/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['knex', 'pg', '**/data/**'], message: 'edge/ never touches SQL: the control plane is handed the registry.' },
            {
              group: [...ABOVE_THE_DATA, '**/scripts/**', '**/adapters/**'],
              message: 'edge/ uses only the domain vocabulary and lib/.',
            },
          ],
        },
      ],
    },
  },
  {
    // What a module loads is known before it runs: no import() in the product (scripts may load build tools lazily).
    files: [
      'api/**/*.ts',
      'activities/**/*.ts',
      'adapters/**/*.ts',
      'data/**/*.ts',
      'domain/**/*.ts',
      'edge/**/*.ts',
      'lib/**/*.ts',
      'temporal-config/**/*.ts',
      'workers/**/*.ts',
      'workflows/**/*.ts',
    ],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-syntax': ['error', NO_DYNAMIC_IMPORT],
    },
  },
  {
    // An activity's failure type is a catalogued code: activities/failures.ts makes them, nothing else does.
    // (This block repeats the import() ban: a later block's no-restricted-syntax replaces an earlier one's.)
    files: ['activities/**/*.ts'],
    ignores: ['**/*.test.ts', 'activities/failures.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        NO_DYNAMIC_IMPORT,
        {
          selector: "MemberExpression[object.name='ApplicationFailure'][property.name=/^(create|nonRetryable|retryable|fromError)$/]",
          message: 'Fail an activity with finalFailure or retryableFailure (activities/failures.ts): its type must be a catalogued code.',
        },
        {
          selector: "NewExpression[callee.name='ApplicationFailure']",
          message: 'Fail an activity with finalFailure or retryableFailure (activities/failures.ts): its type must be a catalogued code.',
        },
      ],
    },
  },
  {
    files: ['domain/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: ['../**'], message: 'The domain vocabulary imports nothing of the platform.' }] },
      ],
    },
  },
  {
    // Sizes (#61): a file within 400 lines, a function within 80 lines of code (blank lines and comments not
    // counted). Product code only; tests may be longer.
    name: 'opsflow/sizes',
    files: PRODUCT_CODE,
    ignores: ['**/*.test.ts'],
    rules: SIZE_RULES,
  },
  // Files over a limit today, each waiting for its split: the list only shrinks. A file that keeps within
  // the limits fails test/foundation/sizes.test.ts until it leaves the list. (ESLint refuses an empty `files`.)
  ...(SIZE_DEBT.length > 0 ? [{ name: 'opsflow/size-debt', files: SIZE_DEBT, rules: { 'max-lines': 'off', 'max-lines-per-function': 'off' } }] : []),
);

module.exports.SIZE_RULES = SIZE_RULES;
module.exports.SIZE_DEBT = SIZE_DEBT;
