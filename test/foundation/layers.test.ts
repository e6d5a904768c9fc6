import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The arrows run one way, and `npm run check` holds them: a wrong-way import written into a layer fails
 * the project's own lint rules (eslint.config.js), and the right-way one beside it passes. SQL stays in
 * data/, outside systems in adapters/ and the edge in edge/; nothing loads a module with import(); an
 * activity fails only with a catalogued code as its type.
 */
const ROOT = path.resolve(__dirname, '..', '..');

/** A probe's source: one import, used, so that nothing but the arrow can fail the lint. */
const imports = (what: string, from: string): string => `import ${what} from '${from}';\nexport const used = ${what.replace(/[{}]|\* as /g, '').trim()};\n`;

const wrongWay: Array<[string, string, string]> = [
  ['data', imports('{ publishWorkflowId }', '../workflows/approvals/definitions'), 'data/ uses only the domain vocabulary'],
  ['api', imports('{ createApprovalsActivities }', '../activities/approvals'), 'The API does not run activities'],
  ['api', imports('{ publishComponent }', '../workflows/approvals/publish-component'), 'The API starts workflows by type name'],
  ['workflows', imports('{ createDb }', '../data/db'), 'Workflows do no I/O'],
  ['workflows', imports('{ ensureBaseImage }', '../adapters/deploy/jre-base-image'), 'Workflows do no I/O'],
  ['adapters', imports('{ PUBLISH_WORKFLOW }', '../workflows/approvals/definitions'), 'adapters/ uses only the domain vocabulary'],
  ['workflows', imports('{ createApprovalsActivities }', '../activities/approvals'), 'Import activities as types only'],
  ['workflows', imports('{ PlatformError }', '../lib/errors'), 'Workflows import only the domain vocabulary and the SDK'],
  ['domain', imports('{ PlatformError }', '../lib/errors'), 'The domain vocabulary imports nothing of the platform'],
  // The bare folder: workflows/index re-exports every workflow body.
  ['api', imports('* as every', '../workflows'), 'The API starts workflows by type name'],
  ['data', imports('* as every', '../workflows'), 'data/ uses only the domain vocabulary'],
  ['activities', imports('{ PUBLISH_WORKFLOW }', '../workflows/approvals/definitions'), 'Activities sit below the API, the workers and the workflows'],
  ['api', imports('knex', 'knex'), 'SQL lives in data/'],
  ['data', imports('Docker', 'dockerode'), 'data/ speaks SQL only'],
  ['data', imports('nodemailer', 'nodemailer'), 'data/ speaks SQL only'],
  ['data', imports('{ fetch }', 'undici'), 'data/ speaks SQL only'],
  ['adapters', imports('knex', 'knex'), 'adapters/ never touches SQL'],
  ['adapters', imports('{ createDb }', '../data/db'), 'adapters/ never touches SQL'],
  ['edge', imports('knex', 'knex'), 'edge/ never touches SQL'],
  ['edge', imports('{ edgeServices }', '../data/deploy/registry'), 'edge/ never touches SQL'],
  ['api', "export const later = () => import('../domain/deploy');\n", 'No dynamic import()'],
  // The API reads the engine and never changes it (issue #59): a write called here, or an adapter's write imported.
  [
    'api',
    "import Docker from 'dockerode';\nexport const change = (docker: Docker) => docker.getContainer('x').update({ Memory: 1 });\n",
    'never changes the Docker engine',
  ],
  [
    'api',
    "import Docker from 'dockerode';\nexport const stop = async (docker: Docker) => (await docker.listContainers()).map((c) => docker.getContainer(c.Id).kill());\n",
    'never changes the Docker engine',
  ],
  ['api', imports('{ updateContainerLimits }', '../adapters/deploy/container-limits'), 'never changes the Docker engine'],
  ['api', imports('{ ensureSwarm }', '../scripts/platform/swarm'), 'never changes the Docker engine'],
  [
    'api',
    "import Docker from 'dockerode';\nexport const change = (c: Docker.Container | undefined) => c?.['update']({ Memory: 1 });\n",
    'never changes the Docker engine',
  ],
  ['api', "import Docker from 'dockerode';\nexport const change = (c: Docker.Container) => Reflect.apply(c.kill, c, []);\n", 'never changes the Docker engine'],
  [
    'api',
    "import Docker from 'dockerode';\nexport const raw = (docker: Docker) => docker.modem.dial({ path: '/containers/x/kill', method: 'POST' }, () => undefined);\n",
    'never changes the Docker engine',
  ],
  ['activities', "export const later = () => import('../domain/deploy');\n", 'No dynamic import()'],
  // A failure type that is not a catalogued code, written past the typed helpers.
  [
    'activities',
    "import { ApplicationFailure } from '@temporalio/common';\nexport const fail = () => ApplicationFailure.nonRetryable('no', 'NOT_A_CODE');\n",
    'its type must be a catalogued code',
  ],
  [
    'activities',
    "import { ApplicationFailure } from '@temporalio/activity';\nexport const fail = () => new ApplicationFailure('no', 'NOT_A_CODE', true);\n",
    'its type must be a catalogued code',
  ],
];
const rightWay: Array<[string, string]> = [
  ['api', "import { PUBLISH_WORKFLOW } from '../workflows/approvals/definitions';\nexport const name = PUBLISH_WORKFLOW;\n"],
  ['data', "import { DEFAULT_STAGES } from '../domain/approvals';\nexport const stages = DEFAULT_STAGES;\n"],
  ['api', "import { baseImageState } from '../adapters/deploy/jre-base-image';\nexport const state = baseImageState;\n"],
  ['api', "import Docker from 'dockerode';\nexport const read = async (docker: Docker) => (await docker.getContainer('x').inspect()).State;\n"],
  ['workflows', "import type { ApprovalsActivities } from '../activities/approvals';\nexport type A = ApprovalsActivities;\n"],
  ['adapters', "import type { ChannelConfigRow } from '../data/messaging/channel-configs';\nexport type Row = ChannelConfigRow;\n"],
  ['edge', "import { RESERVED_SLUGS } from '../domain/deploy';\nexport const slugs = RESERVED_SLUGS;\n"],
  ['activities', "import type { WorkerDescription } from '../domain/operations';\nexport type W = WorkerDescription;\n"],
  ['activities', "import { finalFailure } from './failures';\nexport const fail = () => finalFailure('NOT_FOUND', 'no');\n"],
];

// The arrows (no-restricted-imports), the ban on import() (no-restricted-syntax), and no engine writes in the API.
const RULES = ['@typescript-eslint/no-restricted-imports', 'no-restricted-syntax', 'opsflow/no-engine-writes'];

const probeFile = (folder: string, n: number) => path.join(ROOT, folder, `layer-probe-${process.pid}-${n}.ts`);
const probes = [...wrongWay.map(([folder, source]) => ({ folder, source })), ...rightWay.map(([folder, source]) => ({ folder, source }))];
let restricted: string[][];

beforeAll(async () => {
  // Probes are written into the layers, linted by the project's own eslint in one run, then removed.
  probes.forEach((probe, n) => fs.writeFileSync(probeFile(probe.folder, n), probe.source));
  try {
    const eslint = path.join(ROOT, 'node_modules', '.bin', 'eslint');
    const files = probes.map((probe, n) => probeFile(probe.folder, n));
    const { stdout } = await promisify(execFile)(eslint, ['--format', 'json', ...files], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }).catch(
      (error: { stdout?: string }) => ({ stdout: error.stdout ?? '[]' }),
    );
    const results = JSON.parse(stdout) as Array<{ filePath: string; messages: Array<{ ruleId: string | null; message: string }> }>;
    restricted = files.map((file) =>
      (results.find((result) => result.filePath === file)?.messages ?? [])
        .filter((message) => RULES.includes(message.ruleId ?? ''))
        .map((message) => message.message),
    );
  } finally {
    probes.forEach((probe, n) => fs.rmSync(probeFile(probe.folder, n), { force: true }));
  }
}, 120000);

test.each(wrongWay.map(([folder, source, message], n) => [folder, source.split('\n')[0], message, n] as const))(
  'a wrong-way import in %s/ fails the lint: %s',
  (_folder, _line, message, n) => {
    expect(restricted[n]).toEqual([expect.stringContaining(message)]);
  },
);

test.each(rightWay.map(([folder, source], n) => [folder, source.split('\n')[0], wrongWay.length + n] as const))(
  'the right-way import in %s/ passes: %s',
  (_folder, _line, n) => {
    expect(restricted[n]).toEqual([]);
  },
);
