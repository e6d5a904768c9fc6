import fs from 'node:fs';
import path from 'node:path';
import type { Reporter, TestCase, TestResult } from '@playwright/test/reporter';

type FileTotals = { seconds: number; passed: number; failed: number; skipped: number };

/**
 * Playwright's half of test/support/timing-reporter.js: each spec file's summed test time and counts, one
 * JSON line per file, in the file OPSFLOW_TEST_TIMINGS names. The suite runs no retries.
 */
export default class PlaywrightTimingReporter implements Reporter {
  private readonly files = new Map<string, FileTotals>();

  onTestEnd(test: TestCase, result: TestResult): void {
    const file = path.relative(process.cwd(), test.location.file);
    const totals = this.files.get(file) ?? { seconds: 0, passed: 0, failed: 0, skipped: 0 };
    totals.seconds += result.duration / 1000;
    // By outcome, not status: a test marked to fail that fails is as expected.
    const outcome = test.outcome();
    if (outcome === 'skipped') totals.skipped++;
    else if (outcome === 'expected') totals.passed++;
    else totals.failed++;
    this.files.set(file, totals);
  }

  onEnd(): void {
    const out = process.env.OPSFLOW_TEST_TIMINGS;
    if (!out) return;
    for (const [file, totals] of this.files) fs.appendFileSync(out, `${JSON.stringify({ stage: 'playwright', file, ...totals })}\n`);
  }
}
