import { freePort } from './slots';

/**
 * Starts a component on ports picked free just before: another process may take one meanwhile (seen on a
 * loaded CI machine), so a start that fails is tried again on fresh ports, three times in all, before the
 * error names the component. `pickPort` is for a test of this very retry.
 */
export async function withStage<T>(
  component: string,
  start: (ports: number[]) => Promise<T>,
  portCount = 0,
  pickPort: () => Promise<number> = freePort,
): Promise<T> {
  let lastError: unknown;
  for (let attempt = 1; attempt <= 3; attempt++) {
    try {
      return await start(await Promise.all(Array.from({ length: portCount }, () => pickPort())));
    } catch (error) {
      lastError = error;
      if (portCount === 0) break;
    }
  }
  throw new Error(`Test platform: ${component} could not start: ${lastError instanceof Error ? lastError.message : lastError}`, { cause: lastError });
}
