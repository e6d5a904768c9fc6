import { pinnedTool } from './pinned-tool';

/** The schemathesis release the API fuzzer runs, installed from the Python package index into `.tools/venv`. */
export const PINNED_SCHEMATHESIS = '4.32.5';

export const fuzzerTool = pinnedTool({
  name: 'schemathesis',
  wheel: 'schemathesis',
  version: PINNED_SCHEMATHESIS,
  bin: 'st',
  versionOf: (printed) => /version (\S+)/.exec(printed)?.[1] ?? null,
});

export const TOOLS_SCHEMATHESIS = fuzzerTool.binary;
export const fuzzerProblem = fuzzerTool.problem;
