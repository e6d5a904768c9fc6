/**
 * Two tiers (docs/testing.md):
 * - unit: `*.unit.test.ts`, workflow logic on Temporal's time-skipping test server with stand-in activities, and
 *   pure rules. No Docker, PostgreSQL, Envoy or Temporal server; `npm run test:unit`, first.
 * - slow: every other `*.test.ts`, against one set of real components (PostgreSQL, Temporal, mail capture)
 *   per run, shared by every test file.
 * - drills: `test/production/*.drill.ts`, the production stack of docker-compose.yml run as an operator runs
 *   it; `npm run test:drills`, one file at a time, a stage of `.ci/run` after `npm test` (docs/testing.md).
 */
const roots = ['test', 'adapters', 'edge', 'api', 'activities', 'workflows', 'data', 'domain', 'lib'].map((folder) => `<rootDir>/${folder}`);
const transform = { '^.+\\.ts$': ['@swc/jest'] };

module.exports = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      roots,
      testMatch: ['**/*.unit.test.ts'],
      transform,
      globalSetup: '<rootDir>/test/support/unit-setup.ts',
    },
    {
      displayName: 'slow',
      testEnvironment: 'node',
      roots,
      testMatch: ['**/*.test.ts'],
      // The engine restart disturbs every test beside it: it runs alone, last (npm run test:engine).
      testPathIgnorePatterns: [
        '/node_modules/',
        '\\.unit\\.test\\.ts$',
        ...(process.env.OPSFLOW_ENGINE_RESTART ? [] : ['/test/faults/engine-restart\\.test\\.ts$']),
      ],
      transform,
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    {
      displayName: 'drills',
      testEnvironment: 'node',
      roots: ['<rootDir>/test/production'],
      testMatch: ['**/*.drill.ts'],
      transform,
    },
  ],
  testTimeout: 120000,
  // Three files at once on two cores: the slow tier waits on its components more than it computes (26 % of
  // the CPU idle with two). 856 s against about 1,190 s with two on 2026-12-05 (docs/testing.md). The swarm
  // pass keeps two (package.json): three were not tried there.
  maxWorkers: 3,
  // Longest files first, from the times a green run recorded: a fresh clone has no jest cache to order by.
  testSequencer: '<rootDir>/test/support/sequencer.js',
  verbose: true,
  // Each file's time and counts, for the table `npm test` ends with (scripts/test.ts).
  reporters: ['default', '<rootDir>/test/support/timing-reporter.js'],
};
