import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The directory holding package.json and openapi/: found by walking up, so the
 * same code works from src/ (tsx) and dist/src/ (compiled).
 */
export function projectRoot(start: string = import.meta.dirname): string {
  let dir = start;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${start}`);
    dir = parent;
  }
  return dir;
}

let version: string | undefined;

/** The project's version from package.json, read once. */
export function projectVersion(): string {
  version ??= (JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}
