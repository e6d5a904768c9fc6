/**
 * `npx tsx bench/email-scale.ts [--users 1000,10000,100000]`: one role send at each size, side by side in one
 * run (#63). Each size is `bench/email.ts --users N` in a process and on a platform of its own,
 * one after the other: the platform's time per message beside pooled nodemailer's (its floor) in the same
 * run, and the peak memory of the messaging worker and of the baseline's process.
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { typescriptCommand } from '../scripts/platform/children';
import { ROOT } from './support';

interface Sent {
  seconds: number;
  peakMb: number;
}

/** The figures of one line of bench/email.ts's report: `  baseline: … 1000 messages  1.23 s  813.0 messages/s  peak 120 MiB`. */
function sentOf(output: string, side: 'baseline' | 'platform'): Sent {
  const line = new RegExp(`${side}: .*? (\\d+) messages\\s+([\\d.]+) s\\s+[\\d.]+ messages/s\\s+peak (\\d+) MiB`).exec(output);
  if (!line) throw new Error(`bench/email.ts printed no ${side} line:\n${output}`);
  return { seconds: Number(line[2]), peakMb: Number(line[3]) };
}

function main(): void {
  const { values } = parseArgs({ options: { users: { type: 'string', default: '1000,10000,100000' } } });
  const sizes = values.users.split(',').map(Number);
  console.log(`bench/email-scale: one role send to ${sizes.join(', ')} users, each on a platform of its own (${os.cpus().length} cores)`);
  const rows: string[] = [];
  for (const users of sizes) {
    const output = execFileSync(...typescriptCommand('bench/email.ts', ['--users', String(users)]), {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    const baseline = sentOf(output, 'baseline');
    const platform = sentOf(output, 'platform');
    const perMessage = (sent: Sent) => ((sent.seconds * 1e6) / users).toFixed(0).padStart(6);
    rows.push(
      `  ${String(users).padStart(7)} users: platform ${perMessage(platform)} µs a message, floor (pooled nodemailer) ${perMessage(baseline)} µs; share of the floor ${(baseline.seconds / platform.seconds).toFixed(2)}; peak: worker ${platform.peakMb} MiB, baseline ${baseline.peakMb} MiB`,
    );
    console.log(rows[rows.length - 1]);
  }
  console.log('side by side:');
  for (const row of rows) console.log(row);
}

main();
