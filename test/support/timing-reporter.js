// @ts-check
const fs = require('node:fs');
const path = require('node:path');

/**
 * Writes each test file's time and counts to the file OPSFLOW_TEST_TIMINGS names, one JSON line per file,
 * so that `npm test` can end with the slowest files of every stage. Without that variable it does nothing.
 */
class TimingReporter {
  onTestResult(_test, result) {
    const out = process.env.OPSFLOW_TEST_TIMINGS;
    if (!out) return;
    const seconds = (result.perfStats.end - result.perfStats.start) / 1000;
    const line = {
      stage: process.env.OPSFLOW_STAGE || 'jest',
      file: path.relative(process.cwd(), result.testFilePath),
      seconds,
      passed: result.numPassingTests,
      failed: result.numFailingTests + (result.testExecError ? 1 : 0),
      skipped: result.numPendingTests + result.numTodoTests,
    };
    fs.appendFileSync(out, `${JSON.stringify(line)}\n`);
  }
}

module.exports = TimingReporter;
