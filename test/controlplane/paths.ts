import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root, resolved from this file so callers may run from any cwd. */
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export function repoPath(...segments: string[]): string {
  return path.join(repoRoot, ...segments);
}
