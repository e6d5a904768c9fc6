import fs from 'node:fs';
import path from 'node:path';
import { Connection, ConnectionOptions } from '@temporalio/client';
import { searchAttributeFlags, SEARCH_ATTRIBUTES } from '../../temporal-config/search-attributes';
import { CLI_NOT_FOUND_MESSAGE, findTemporalCli } from '../../temporal-config/temporal-cli';
import { spawnLogged, waitForHttp } from './children';

export interface RunningTemporal {
  address: string;
  uiUrl: string;
  cli: string;
  /** Resolves, with how it ended, when the dev server exits. */
  exited: Promise<string>;
  stop(): Promise<void>;
  /** Kills the dev server at once (SIGKILL), as a crash would, and resolves when it has exited. */
  kill(): Promise<void>;
}

/**
 * Whether a Temporal frontend answers (GetSystemInfo, a health call every authorizer lets through): the dev
 * server's and each cluster node's start waits on it. The error it met, when it did not.
 */
export async function frontendAnswers(address: string, tls: ConnectionOptions['tls'] = false): Promise<true | unknown> {
  try {
    const connection = await Connection.connect({ address, connectTimeout: 1000, tls });
    try {
      await connection.workflowService.getSystemInfo({});
      return true;
    } finally {
      await connection.close();
    }
  } catch (error) {
    return error;
  }
}

async function waitForFrontend(address: string, exited: () => string | null, deadlineMs: number, said: () => string): Promise<void> {
  const started = Date.now();
  let lastError: unknown;
  while (Date.now() - started < deadlineMs) {
    const exit = exited();
    if (exit !== null) throw new Error(`Temporal dev server exited while starting (${exit}): ${said() || 'it said nothing'}`);
    const answer = await frontendAnswers(address);
    if (answer === true) return;
    lastError = answer;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`Temporal dev server did not answer on ${address} within ${deadlineMs} ms: ${String(lastError)}`);
}

/**
 * The dev server's SQLite in write-ahead-log mode, synced at checkpoints rather than at every commit: SQLite's
 * default (a rollback journal, FULL) syncs the disk several times for each step of every workflow, which on
 * this project's machine made a one-step workflow take about 1.6 times as long (decision 030). A commit still
 * survives the server's own crash or kill; only the machine losing power can undo the last ones. This is the
 * development default: production runs the Temporal cluster on PostgreSQL.
 */
const SQLITE_PRAGMAS = ['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal'];

/**
 * Task queues dispatch by each run's priority, and share out by its fairness key (decision 046), as the
 * cluster's dynamic configuration says too. Off only for a bench that measures what fairness changes.
 */
export const fairnessFlags = (on: boolean) => ['--dynamic-config-value', `matching.enableFairness=${on}`];

/**
 * Starts `temporal server start-dev` on a database file (never in memory, so restarts keep running
 * workflows) with the Web UI and the platform's search attributes. Falls back to the SDK's own download
 * when no CLI is installed.
 */
export async function startTemporal(args: {
  dbFile: string;
  port: number;
  uiPort: number;
  namespaces: string[];
  logFile?: string;
  /** The API's codec endpoint (…/api/temporal/codec), which the Web UI opens sealed payloads through. */
  codecEndpoint?: string;
  /** Fair shares between sites on the task queues: on unless a bench compares (decision 046). */
  fairness?: boolean;
}): Promise<RunningTemporal> {
  fs.mkdirSync(path.dirname(args.dbFile), { recursive: true });
  const address = `127.0.0.1:${args.port}`;
  const uiUrl = `http://127.0.0.1:${args.uiPort}`;
  const cli = findTemporalCli();
  const namespaceFlags = args.namespaces.filter((ns) => ns !== 'default').flatMap((ns) => ['--namespace', ns]);
  if (!cli) return startFromSdkDownload({ ...args, address, uiUrl });

  const { child, exit, exited, said, stop } = spawnLogged(
    cli.path,
    [
      'server',
      'start-dev',
      '--db-filename',
      path.resolve(args.dbFile),
      ...SQLITE_PRAGMAS,
      ...fairnessFlags(args.fairness ?? true),
      '--ip',
      '127.0.0.1',
      '--port',
      String(args.port),
      '--ui-port',
      String(args.uiPort),
      '--log-level',
      'warn',
      ...(args.codecEndpoint ? ['--ui-codec-endpoint', args.codecEndpoint] : []),
      ...searchAttributeFlags(),
      ...namespaceFlags,
    ],
    args.logFile,
  );
  try {
    await waitForFrontend(address, exit, 60000, said);
    await waitForHttp(uiUrl, { what: 'Temporal Web UI', deadlineMs: 30000, isUp: (status) => status < 500 });
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    address,
    uiUrl,
    cli: `${cli.path} (${cli.source})`,
    exited,
    stop,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

async function startFromSdkDownload(args: {
  fairness?: boolean;
  dbFile: string;
  port: number;
  uiPort: number;
  namespaces: string[];
  address: string;
  uiUrl: string;
}): Promise<RunningTemporal> {
  try {
    const { TestWorkflowEnvironment } = await import('@temporalio/testing');
    const env = await TestWorkflowEnvironment.createLocal({
      server: {
        ip: '127.0.0.1',
        port: args.port,
        ui: true,
        uiPort: args.uiPort,
        dbFilename: path.resolve(args.dbFile),
        searchAttributes: Object.keys(SEARCH_ATTRIBUTES).map((name) => ({ name, type: 'KEYWORD' as const })),
        extraArgs: [
          ...SQLITE_PRAGMAS,
          ...fairnessFlags(args.fairness ?? true),
          ...args.namespaces.filter((ns) => ns !== 'default').flatMap((ns) => ['--namespace', ns]),
        ],
      },
    });
    // The SDK's server is not ours to watch: it never counts as exited.
    return {
      address: args.address,
      uiUrl: args.uiUrl,
      cli: "the Temporal SDK's download",
      exited: new Promise<string>(() => undefined),
      stop: () => env.teardown(),
      // The SDK's shutdown kills the server's process (SIGKILL): here stopping it and killing it are one.
      kill: () => env.teardown(),
    };
  } catch (error) {
    throw new Error(`${CLI_NOT_FOUND_MESSAGE} (SDK download failed: ${error instanceof Error ? error.message : error})`, { cause: error });
  }
}
