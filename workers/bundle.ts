import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, WorkflowBundleOption } from '@temporalio/worker';
import { PROJECT_ROOT } from '../lib/project-root';
import { FAILURE_CONVERTER_PATH } from '../temporal-config/payload-codec';

// The source, also when this runs compiled: the bundler compiles the workflows for their sandbox itself.
const WORKFLOWS_INDEX = path.join(PROJECT_ROOT, 'workflows', 'index.ts');
/** Interceptors in every run's sandbox: a run started inside a trace joins it (decision 045). */
const WORKFLOW_INTERCEPTORS = [path.join(PROJECT_ROOT, 'workflows', 'trace-interceptors.ts')];

/** Bundles every workflow once, so all workers of a start (or a test run) share one prebuilt bundle. */
export async function writeWorkflowBundle(outputPath: string): Promise<string> {
  // The failure converter goes into the bundle: the sandbox converts failures as the workers do.
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_INDEX,
    workflowInterceptorModules: WORKFLOW_INTERCEPTORS,
    failureConverterPath: FAILURE_CONVERTER_PATH,
    logger: quietBundlerLogger,
  });
  fs.mkdirSync(path.dirname(outputPath), { recursive: true });
  fs.writeFileSync(outputPath, code);
  return outputPath;
}

/**
 * The prebuilt bundle when one is given, else the workflows' source and their interceptors for the worker to
 * bundle itself.
 */
export function workflowSource(
  bundlePath: string | null,
): { workflowBundle: WorkflowBundleOption; workflowModules: [] } | { workflowsPath: string; workflowModules: string[] } {
  if (bundlePath && fs.existsSync(bundlePath)) return { workflowBundle: { codePath: bundlePath }, workflowModules: [] };
  return { workflowsPath: WORKFLOWS_INDEX, workflowModules: WORKFLOW_INTERCEPTORS };
}

const quietBundlerLogger = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
  log: () => undefined,
};

// `node --require tsx/cjs workers/bundle.ts <output>`: npm start builds the bundle in a process of its own, so
// that the bundler's memory goes when it is done instead of staying in the supervisor for the whole run.
if (require.main === module) {
  writeWorkflowBundle(process.argv[2]).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
