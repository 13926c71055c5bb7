/**
 * How kube's JSON patch library reads an operation's `path` and `from`
 * (gopkg.in/evanphx/json-patch.v4 `findObject`): split on `/`, the first
 * segment ignored, the last the key. So `metadata/name` means `/name` (a
 * key of the root) and a pointer without `/` (`""` among them) reaches
 * nothing, failing the operation (kube's 422), except `test`, which reads
 * `""` as the whole document. fast-json-patch reads RFC 6901 pointers,
 * where `""` is the whole document: a `move` from it put the document
 * inside itself (a cycle that overflowed the stack when printed).
 */
export function asKubePointer(pointer: string, op: string): string | undefined {
  if (pointer === '' && op === 'test') return pointer;
  const segments = pointer.split('/');
  if (segments.length < 2) return undefined;
  return `/${segments.slice(1).join('/')}`;
}
