// File helpers that only ever delete what the harness created: work
// directories may be chosen by the user (e.g. .dev/), so they are never
// removed wholesale.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

/** Readers see the old or the new content, never a partial file. */
export async function writeFileAtomically(file: string, content: string): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await fsp.writeFile(temporary, content, { mode: 0o600 });
  await fsp.rename(temporary, file);
}

/** Removes the named entries of `dir`, then `dir` itself if that left it empty. */
export async function removeOwnedEntries(dir: string, entries: readonly string[]): Promise<void> {
  await Promise.all(entries.map((entry) => fsp.rm(path.join(dir, entry), { recursive: true, force: true })));
  await fsp.rmdir(dir).catch(ignoreMissingOrNonEmpty);
}

/** Synchronous variant for process-exit handlers. */
export function removeOwnedEntriesSync(dir: string, entries: readonly string[]): void {
  for (const entry of entries) fs.rmSync(path.join(dir, entry), { recursive: true, force: true });
  try {
    fs.rmdirSync(dir);
  } catch (error) {
    ignoreMissingOrNonEmpty(error);
  }
}

function ignoreMissingOrNonEmpty(error: unknown): void {
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== 'ENOENT' && code !== 'ENOTEMPTY') throw error;
}
