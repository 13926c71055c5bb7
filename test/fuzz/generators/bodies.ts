/**
 * Request bodies and patches: a valid claim (or an empty patch) with hostile
 * values set or duplicated at known fields, or a wholly hostile document;
 * JSON or YAML; sometimes with invalid UTF-8 spliced in. Status writes go as
 * the admin, as tenant roles do not grant them.
 */
import fc from 'fast-check';
import type { Body, Family, FuzzCase } from '../model.js';
import { duplicateAt, hostile, object, setAt, toJson, toYaml, value, yamlTemplates, type Doc } from '../values.js';
import { claimDoc, COLLECTION, fieldPath, invalidUtf8, namespace, route } from './common.js';

interface Mutation {
  readonly path: readonly string[];
  readonly doc: Doc;
  readonly duplicate: boolean;
}

const mutation: fc.Arbitrary<Mutation> = fc.record({ path: fieldPath, doc: hostile, duplicate: fc.nat({ max: 4 }).map((n) => n === 0) } as const);

function mutate(base: Doc, mutations: readonly Mutation[]): Doc {
  return mutations.reduce((doc, m) => (m.duplicate && m.path.length > 0 ? duplicateAt(doc, m.path, m.doc) : setAt(doc, m.path, m.doc)), base);
}

/** A document: the base with 1–3 mutations, or (rarely) a wholly hostile value. */
function documentFrom(base: Doc): fc.Arbitrary<Doc> {
  return fc.oneof({ weight: 6, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }).map((ms) => mutate(base, ms)) }, { weight: 1, arbitrary: hostile });
}

const withInvalidUtf8 = (text: fc.Arbitrary<string>): fc.Arbitrary<Body> =>
  fc.tuple(text, fc.option(fc.record({ at: fc.nat({ max: 400 }), values: invalidUtf8 }), { freq: 6 })).map(([t, bytes]) => (bytes === null ? { text: t } : { text: t, bytes }));

/** Where a write goes: a create, an update, or the status subresource (as admin). */
const writeTarget = fc.constantFrom(
  { method: 'POST', suffix: '', name: '{new}', sender: 'tenant' as const },
  { method: 'PUT', suffix: '/{obj}', name: '{obj}', sender: 'tenant' as const },
  { method: 'PUT', suffix: '/{obj}/status', name: '{obj}', sender: 'admin' as const },
);

const patchTarget = fc.constantFrom({ suffix: '/{obj}', sender: 'tenant' as const }, { suffix: '/{obj}', sender: 'tenant' as const }, { suffix: '/{obj}/status', sender: 'admin' as const });

const jsonTypes = fc.constantFrom('application/json', 'application/json; charset=utf-8', 'application/json;charset=UTF-16', 'Application/JSON');
const yamlTypes = fc.constantFrom('application/yaml', 'application/yaml; charset=utf-8', 'application/x-yaml', 'text/yaml');

function writeCase(family: Family, contentType: fc.Arbitrary<string>, body: (name: string) => fc.Arbitrary<Body>): fc.Arbitrary<FuzzCase> {
  return fc
    .tuple(writeTarget, namespace, route, contentType)
    .chain(([target, ns, via, type]) =>
      body(target.name).map(
        (b): FuzzCase => ({
          family,
          route: via,
          sender: target.sender,
          method: target.method,
          path: `${COLLECTION.replace('{ns}', ns)}${target.suffix}`,
          headers: { 'Content-Type': type },
          body: b,
          comparable: true,
        }),
      ),
    );
}

export const jsonBody = writeCase('body-json', jsonTypes, (name) => withInvalidUtf8(documentFrom(claimDoc(name)).map(toJson)));

const header = (name: string): string => `apiVersion: tenancy.metal3.io/v1alpha1\nkind: HostClaim\nmetadata:\n  name: ${name}\n  labels: {fuzz-worker: "{worker}"}`;

export const yamlBody = writeCase('body-yaml', yamlTypes, (name) =>
  withInvalidUtf8(
    fc.oneof(
      { weight: 3, arbitrary: documentFrom(claimDoc(name)).map((d) => toYaml(d)) },
      { weight: 1, arbitrary: documentFrom(claimDoc(name)).map(toJson) },
      { weight: 2, arbitrary: yamlTemplates.map((template) => template(header(name))) },
    ),
  ),
);

const PATCH_TYPES: Readonly<Record<'patch-merge' | 'patch-json' | 'patch-strategic' | 'patch-apply', string>> = {
  'patch-merge': 'application/merge-patch+json',
  'patch-json': 'application/json-patch+json',
  'patch-strategic': 'application/strategic-merge-patch+json',
  'patch-apply': 'application/apply-patch+yaml',
};

function patchCase(family: keyof typeof PATCH_TYPES, body: fc.Arbitrary<Body>, query: fc.Arbitrary<string>): fc.Arbitrary<FuzzCase> {
  return fc.tuple(patchTarget, namespace, route, body, query, fc.constantFrom('', '; charset=utf-8')).map(
    ([target, ns, via, b, q, parameter]): FuzzCase => ({
      family,
      route: via,
      sender: target.sender,
      method: 'PATCH',
      path: `${COLLECTION.replace('{ns}', ns)}${target.suffix}${q}`,
      headers: { 'Content-Type': `${PATCH_TYPES[family]}${parameter}` },
      body: b,
      comparable: true,
    }),
  );
}

const mergeDocument = documentFrom(object([]));
const noQuery = fc.constantFrom('', '', '', '?dryRun=All');

export const mergePatch = patchCase('patch-merge', withInvalidUtf8(mergeDocument.map(toJson)), noQuery);
export const strategicPatch = patchCase('patch-strategic', withInvalidUtf8(mergeDocument.map(toJson)), noQuery);

const hostilePointer = fc.oneof(
  fc.constantFrom('', '/', '/metadata', '/metadata/name', '/metadata/uid', '/metadata/resourceVersion', '/metadata/labels/a~1b', '/metadata/labels/~2', '/metadata/labels/~', '/metadata/finalizers/-', '/metadata/finalizers/0', '/metadata/finalizers/99999999999999999999', '/metadata/finalizers/-1', '/metadata/finalizers/01', '/spec/poweredOn', '/spec/-', '/spec/a/b/c', '/kind', '/apiVersion', '/status', '/status/phase', 'metadata/name', '/metadata/annotations/x', '//', '/0', '/__proto__/polluted', '/constructor/prototype/x'),
  fc.array(fc.string({ maxLength: 6 }), { maxLength: 4 }).map((parts) => parts.map((p) => `/${p}`).join('')),
);

const jsonPatchOperation: fc.Arbitrary<Doc> = fc
  .record(
    {
      op: fc.oneof({ weight: 6, arbitrary: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test').map(value) }, { weight: 1, arbitrary: fc.constantFrom('bogus', '', 'ADD', '_get').map(value) }, { weight: 1, arbitrary: hostile }),
      path: fc.oneof({ weight: 6, arbitrary: hostilePointer.map(value) }, { weight: 1, arbitrary: hostile }),
      value: hostile,
      from: fc.oneof({ weight: 3, arbitrary: hostilePointer.map(value) }, { weight: 1, arbitrary: hostile }),
    },
    { requiredKeys: ['op'] },
  )
  .map((fields) => object(Object.entries(fields) as [string, Doc][]));

const jsonPatchDocument = fc.oneof({ weight: 6, arbitrary: fc.array(jsonPatchOperation, { maxLength: 4 }).map((items): Doc => ({ kind: 'array', items })) }, { weight: 1, arbitrary: hostile });

export const jsonPatch = patchCase('patch-json', withInvalidUtf8(jsonPatchDocument.map(toJson)), noQuery);

const applyQuery = fc
  .tuple(fc.option(fc.constantFrom('fuzz', '', 'équipe', 'x'.repeat(129), 'kubectl-client-side-apply'), { freq: 5 }), fc.option(fc.constantFrom('true', 'false', 'bogus')), fc.option(fc.constant('All'), { freq: 4 }))
  .map(([manager, force, dryRun]) => {
    const parameters = [manager === null ? undefined : `fieldManager=${encodeURIComponent(manager)}`, force === null ? undefined : `force=${force}`, dryRun === null ? undefined : `dryRun=${dryRun}`].filter((p) => p !== undefined);
    return parameters.length === 0 ? '' : `?${parameters.join('&')}`;
  });

export const applyPatch = patchCase(
  'patch-apply',
  withInvalidUtf8(
    fc.oneof(
      { weight: 3, arbitrary: documentFrom(claimDoc('{obj}')).map((d) => toYaml(d)) },
      { weight: 2, arbitrary: documentFrom(claimDoc('{obj}')).map(toJson) },
      { weight: 1, arbitrary: yamlTemplates.map((template) => template(header('{obj}'))) },
    ),
  ),
  applyQuery,
);
