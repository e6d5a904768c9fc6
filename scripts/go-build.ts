import fs from 'node:fs';
import path from 'node:path';
import { runToEnd } from './platform/children';

/**
 * Builds a Go program of a module of ours (its go.mod names the program's module at a pinned version, its
 * go.sum every module the build may use: `-mod=readonly` builds those and no other) into `output`. It is
 * built beside, then renamed into place: a build cut short leaves nothing that passes for the program, and
 * a process started meanwhile runs a whole binary, old or new.
 */
export async function goBuildInto(args: { moduleDir: string; program: string; output: string; tags?: string[] }): Promise<string> {
  fs.mkdirSync(path.dirname(args.output), { recursive: true });
  const partial = `${args.output}.${process.pid}.tmp`;
  const tags = args.tags && args.tags.length > 0 ? ['-tags', args.tags.join(',')] : [];
  try {
    await runToEnd('go', ['-C', args.moduleDir, 'build', '-mod=readonly', ...tags, '-o', partial, args.program], { ...process.env, GOFLAGS: '' });
    fs.renameSync(partial, args.output);
  } finally {
    fs.rmSync(partial, { force: true });
  }
  return args.output;
}
