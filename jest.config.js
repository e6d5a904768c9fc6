/** One set of real components (PostgreSQL, Temporal, mail capture) per run, shared by every test file. */
module.exports = {
  testEnvironment: 'node',
  roots: [
    '<rootDir>/test',
    '<rootDir>/adapters',
    '<rootDir>/edge',
    '<rootDir>/api',
    '<rootDir>/activities',
    '<rootDir>/workflows',
    '<rootDir>/data',
    '<rootDir>/domain',
    '<rootDir>/lib',
  ],
  testMatch: ['**/*.test.ts'],
  // The engine restart disturbs every test beside it: it runs alone, last (npm run test:engine).
  testPathIgnorePatterns: ['/node_modules/', ...(process.env.OPSFLOW_ENGINE_RESTART ? [] : ['/test/faults/engine-restart\\.test\\.ts$'])],
  transform: { '^.+\\.ts$': ['@swc/jest'] },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 120000,
  maxWorkers: 2,
  verbose: true,
};
