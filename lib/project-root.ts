import fs from 'node:fs';
import path from 'node:path';

/**
 * The project's folder: the nearest folder above this file that holds package.json. It is found, not
 * counted, because compiled code runs from dist/, one folder deeper than its source.
 */
function findProjectRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}

export const PROJECT_ROOT = findProjectRoot(__dirname);
