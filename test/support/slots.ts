import { bindsNow, freePort } from '../../scripts/platform/children';

/** What the shared test platform tells each test file, and how test files divide it. */
export const TEST_SLOTS = 72;
export const TEMPLATE_DATABASE = 'opsflow_template';
/** The JRE base image of the suite's JAR deploys, built by its global setup from Debian packages when missing. */
export const TEST_BASE_IMAGE = 'opsflow/jre:17';

export interface TestPlatformInfo {
  dataDir: string;
  postgres: { port: number; adminUrl: string; urlPrefix: string };
  temporal: { address: string; uiUrl: string };
  mail: { smtpPort: number; uiPort: number; apiUrl: string };
  workflowBundlePath: string;
  slots: number;
  /** For the swarm driver's tests: the registry its nodes pull from and the door of the host's edge; or why there is none. */
  swarm: { registry: string; door: string } | { error: string };
}

/** Every test file's namespace begins so. */
export const SLOT_NAMESPACE_PREFIX = 'test-';
export const slotNamespace = (slot: number) => `${SLOT_NAMESPACE_PREFIX}${String(slot).padStart(2, '0')}`;
export const slotDatabase = (slot: number) => `opsflow_t${String(slot).padStart(2, '0')}`;

export { freePort };

/** The deploy scope of a test file: its containers and images carry it, so files never touch each other's. */
export const deployScopeOf = (slot: number) => `opsflow-${slotNamespace(slot)}`;

/**
 * A free port whose next `following` ports are free too: for `npm start`, whose API and edge admin sit at
 * API_PORT + 1 and API_PORT + 2. Free when asked; a start that then loses one of them to another process
 * fails saying which port.
 */
export async function freePortRun(following: number): Promise<number> {
  for (;;) {
    const first = await freePort();
    if (first + following > 65535) continue;
    const rest = await Promise.all(Array.from({ length: following }, (_, i) => bindsNow(first + 1 + i)));
    if (rest.every(Boolean)) return first;
  }
}
