import net from 'node:net';

/** What the shared test platform tells each test file, and how test files divide it. */
export const TEST_SLOTS = 60;
export const TEMPLATE_DATABASE = 'opsflow_template';

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

export const slotNamespace = (slot: number) => `test-${String(slot).padStart(2, '0')}`;
export const slotDatabase = (slot: number) => `opsflow_t${String(slot).padStart(2, '0')}`;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}


/** The deploy scope of a test file: its containers and images carry it, so files never touch each other's. */
export const deployScopeOf = (slot: number) => `opsflow-${slotNamespace(slot)}`;
