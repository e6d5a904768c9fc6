/** The load bench/deploy and bench/tls put on the edge: the Node client, `wrk`, and how their figures are read and printed. */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';

export interface Load {
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
}

export function get(url: string, headers: Record<string, string>, agent: http.Agent): Promise<number> {
  return new Promise((resolve) => {
    const request = http.get(url, { headers, agent }, (answer) => {
      answer.resume();
      answer.on('end', () => resolve(answer.statusCode ?? 0));
    });
    request.on('error', () => resolve(0));
  });
}

/** `requests` calls of `request` (which answers a status, 0 for a failure), `concurrency` at a time. */
export async function load(args: { request: () => Promise<number>; requests: number; concurrency: number }): Promise<Load> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: args.concurrency }, async () => {
      while (next++ < args.requests) {
        const t = performance.now();
        if ((await args.request()) !== 200) errors++;
        latencies.push(performance.now() - t);
      }
    }),
  );
  const wallMs = performance.now() - started;
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
  return { perSecond: latencies.length / (wallMs / 1000), p50: at(50), p99: at(99), errors };
}

/** CPU time (user + system) a process has used, in microseconds. */
export function cpuMicros(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

export interface WrkArgs {
  url: string;
  headers: Record<string, string>;
  seconds: number;
  connections: number;
  /** A Lua script for wrk (`-s`). */
  script?: string;
}

/** One `wrk` run: 1 thread, `connections` connections, for `seconds`; latencies in ms. */
export function wrk(args: WrkArgs) {
  const out = execFileSync('wrk', wrkArgs(args), { encoding: 'utf8' });
  return wrkResult(out);
}

function wrkArgs(args: WrkArgs): string[] {
  const headerArgs = Object.entries(args.headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
  const scriptArgs = args.script ? ['-s', args.script] : [];
  return ['-t1', `-c${args.connections}`, `-d${args.seconds}s`, '--latency', ...scriptArgs, ...headerArgs, args.url];
}

/** What wrk printed: the rate of good answers, p50 and p99, and every answer that was not 2xx or 3xx plus every socket error. */
function wrkResult(out: string): Load & { non2xx: number; socketErrors: number; answered: number } {
  const ms = (text: string) => {
    const [, value, unit] = /([\d.]+)(us|ms|s)/.exec(text)!;
    return Number(value) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : 1);
  };
  const percentile = (p: string) => ms(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(out)![1]);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socketErrorsMatch = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const socketErrors = socketErrorsMatch ? socketErrorsMatch.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  // wrk counts a request only when a whole answer has been parsed (a socket error is counted apart, never as
  // a request); an answer of 400 or more is one, and is taken out: the rate is of good answers only.
  const [, answered, took, unit] = /(\d+) requests in ([\d.]+)(us|ms|s|m)\b/.exec(out)!;
  const seconds = Number(took) * ({ us: 1e-6, ms: 1e-3, s: 1, m: 60 } as Record<string, number>)[unit];
  return {
    perSecond: (Number(answered) - non2xx) / seconds,
    p50: percentile('50'),
    p99: percentile('99'),
    errors: non2xx + socketErrors,
    non2xx,
    socketErrors,
    answered: Number(answered),
  };
}

/** `wrk` in the background until `stop` (SIGINT: wrk then prints its summary, as at the end of its run). */
export function wrkDuring(args: { url: string; headers: Record<string, string>; connections: number }) {
  const child = spawn('wrk', wrkArgs({ ...args, seconds: 600 }), { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    stop: async () => {
      child.kill('SIGINT');
      await ended;
      return wrkResult(out);
    },
  };
}

/** The middle value; of an even count, the mean of the two in the middle. */
export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

export function line(name: string, result: Load): string {
  return `    ${name.padEnd(14)} ${result.perSecond.toFixed(0).padStart(6)} requests/s   p50 ${result.p50.toFixed(2).padStart(6)} ms   p99 ${result.p99.toFixed(2).padStart(7)} ms   errors ${result.errors}`;
}
