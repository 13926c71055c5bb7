import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The layers of src/, lowest first (docs/architecture.md, "Where things
 * live"): a module imports only from its own layer or lower ones, so the
 * directories form no cycle and lower layers never reach up.
 */
const layers: readonly (readonly string[])[] = [
  ['project-root.ts', 'pki', 'observability'],
  ['api'],
  ['backing', 'config.ts'],
  ['auth'],
  ['metal3'],
  ['tenancy'],
  ['resources'],
  ['controllers'],
  ['server'],
  ['main.ts'],
];

const src = path.resolve(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The relative imports of a file, as absolute .ts paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:import|export)[^'"]*?from\s+'(\.[^']+)'/g)].map((match) =>
    path.resolve(path.dirname(file), (match[1] ?? '').replace(/\.js$/, '.ts')),
  );
}

function layerOf(file: string): number {
  const top = path.relative(src, file).split(path.sep)[0] ?? '';
  const rank = layers.findIndex((layer) => layer.includes(top));
  if (rank < 0) throw new Error(`${top} (from ${file}) is in no layer: add it to test/unit/layers.test.ts and docs/architecture.md`);
  return rank;
}

const files = sourceFiles(src);
const graph = new Map(files.map((file) => [file, importsOf(file)]));

describe('src/ layering', () => {
  it('imports only from the same or a lower layer', () => {
    const upward: string[] = [];
    for (const [file, imports] of graph) {
      for (const imported of imports) {
        if (layerOf(imported) > layerOf(file)) upward.push(`${path.relative(src, file)} imports ${path.relative(src, imported)}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('has no import cycle between files', () => {
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (file: string, trail: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...trail.slice(trail.indexOf(file)), file].map((f) => path.relative(src, f)).join(' → '));
        return;
      }
      state.set(file, 'open');
      for (const imported of graph.get(file) ?? []) visit(imported, [...trail, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it('sees the imports it checks', () => {
    // A regex that matched nothing would pass both checks above.
    expect(files.length).toBeGreaterThan(100);
    expect(graph.get(path.join(src, 'main.ts'))?.length).toBeGreaterThan(20);
  });
});
