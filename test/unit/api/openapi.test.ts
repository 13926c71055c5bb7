import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type ErrorRequestHandler } from 'express';
import type { OpenAPIV2, OpenAPIV3 } from 'openapi-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenancyV1alpha1 } from '../../../src/resources/group.js';
import type { ApiGroupVersion, ResourceDescriptor, Verb } from '../../../src/api/resource.js';
import { ApiError } from '../../../src/api/status.js';
import { openAPIJson, openAPIRouter } from '../../../src/api/openapi/handler.js';
import { withRequestInfo } from '../../../src/server/filters/request-info.js';
import { negotiate } from '../../../src/api/negotiation.js';
import { etagMatches } from '../../../src/api/serialized-document.js';
import { projectRoot } from '../../../src/project-root.js';

function acceptsJson(accept: string | undefined): boolean {
  try {
    negotiate(accept, [{ value: true, matches: openAPIJson }], []);
    return true;
  } catch {
    return false;
  }
}
import { PATCH_CONTENT_TYPES, toValidOperationID } from '../../../src/api/openapi/operations.js';
import { loadSchemaSource, parseSchemaSource } from '../../../src/api/openapi/schema-source.js';
import type { K8sSchema } from '../../../src/api/openapi/schema.js';
import { buildOpenAPIV2 } from '../../../src/api/openapi/v2.js';
import { buildOpenAPIV3 } from '../../../src/api/openapi/v3.js';

const GROUP = 'tenancy.metal3.io';
const VERSION = 'v1alpha1';
const ALL_VERBS: readonly Verb[] = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];
const HC_ITEM = `/apis/${GROUP}/${VERSION}/namespaces/{namespace}/hostclaims/{name}`;
const HC_COLLECTION = `/apis/${GROUP}/${VERSION}/namespaces/{namespace}/hostclaims`;
const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

function withVerbs(gv: ApiGroupVersion, verbs: (r: ResourceDescriptor) => readonly Verb[]): ApiGroupVersion {
  return {
    ...gv,
    resources: gv.resources.map((r) => ({
      ...r,
      verbs: verbs(r),
      subresources: r.subresources.map((s) => ({ ...s, verbs: ['get', 'update', 'patch'] as const })),
    })),
  };
}

/** Every verb on HostClaim (and status); HardwareData read-only, as it will be served. */
const allVerbsGV = withVerbs(tenancyV1alpha1, (r) => (r.kind === 'HardwareData' ? ['get', 'list', 'watch'] : ALL_VERBS));

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Every `$ref` string anywhere in a JSON value. */
function collectRefs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) collectRefs(v, out);
  else if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else collectRefs(v, out);
    }
  }
  return out;
}

function operations(doc: OpenAPIV3.Document | OpenAPIV2.Document): { path: string; method: string; op: Record<string, unknown> }[] {
  const out: { path: string; method: string; op: Record<string, unknown> }[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, unknown>)) {
    if (!isRecord(item)) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (isRecord(op)) out.push({ path, method, op });
    }
  }
  return out;
}

/** Resolves a v3 schema node: `$ref`, or `allOf: [{$ref}]` as kube-openapi wraps described refs. */
function derefV3(doc: OpenAPIV3.Document, node: unknown): Record<string, unknown> {
  let current = node;
  for (let i = 0; i < 10; i++) {
    if (!isRecord(current)) throw new Error('not a schema');
    const allOf = current['allOf'];
    if (Array.isArray(allOf) && allOf.length === 1) {
      current = allOf[0];
      continue;
    }
    const ref = current['$ref'];
    if (typeof ref === 'string') {
      current = doc.components?.schemas?.[ref.replace('#/components/schemas/', '')];
      continue;
    }
    return current;
  }
  throw new Error('ref loop');
}

function propertyNames(schema: Record<string, unknown>): string[] {
  const props = schema['properties'];
  return isRecord(props) ? Object.keys(props).sort() : [];
}

describe('schema source', () => {
  const source = loadSchemaSource();

  it('loads once and resolves every $ref', () => {
    expect(loadSchemaSource()).toBe(source);
    expect(source.group).toBe(GROUP);
    expect(source.version).toBe(VERSION);
    for (const ref of collectRefs(Object.fromEntries(source.definitions))) {
      expect(ref.startsWith('#/definitions/')).toBe(true);
      expect(source.definitions.has(ref.slice('#/definitions/'.length)), ref).toBe(true);
    }
    expect(source.objectSchema('HostClaim')).toBe(source.definition('io.metal3.tenancy.v1alpha1.HostClaim'));
  });

  it('finds the project root from src/ and from dist/src/', () => {
    const root = projectRoot();
    expect(projectRoot(`${root}/dist/src/api/openapi`)).toBe(root);
    expect(projectRoot(`${root}/src/api/openapi`)).toBe(root);
  });

  it('rejects an unresolved $ref with a clear error', () => {
    const files = [
      {
        name: 'g.yaml',
        text: [
          'group: example.com',
          'version: v1',
          'definitions:',
          '  com.example.v1.Thing:',
          '    type: object',
          '    properties:',
          '      spec:',
          "        $ref: '#/definitions/com.example.v1.Missing'",
        ].join('\n'),
      },
    ];
    expect(() => parseSchemaSource(files)).toThrow(/unresolved \$ref "#\/definitions\/com\.example\.v1\.Missing"/);
  });

  it('rejects unknown keys, misnamed definitions and required non-properties', () => {
    const doc = (body: string): { name: string; text: string }[] => [
      { name: 'g.yaml', text: `group: example.com\nversion: v1\ndefinitions:\n${body}` },
    ];
    expect(() => parseSchemaSource(doc('  com.example.v1.T:\n    type: object\n    requried: [a]\n'))).toThrow(
      /unknown key "requried"/,
    );
    expect(() => parseSchemaSource(doc('  io.other.v1.T:\n    type: object\n'))).toThrow(/must be named com\.example\.v1\./);
    expect(() =>
      parseSchemaSource(doc('  com.example.v1.T:\n    type: object\n    required: [a]\n    properties:\n      b: {type: string}\n')),
    ).toThrow(/"a" is not a property/);
  });

  it('inlines a whole object schema for validation and pruning', () => {
    const resolved = source.resolvedObjectSchema('HostClaim');
    expect(collectRefs(resolved)).toEqual([]);
    const hostSelector = resolved.properties?.['spec']?.properties?.['hostSelector'];
    expect(Object.keys(hostSelector?.properties ?? {}).sort()).toEqual(['inNamespace', 'matchExpressions', 'matchLabels']);
    expect(Object.isFrozen(resolved)).toBe(true);
    expect(source.resolvedObjectSchema('HostClaim')).toBe(resolved);
  });
});

/**
 * Golden field names: the JSON tags of baremetal-operator's metal3.io/v1alpha1
 * types, read from github.com/metal3-io/baremetal-operator tag v0.14.0-rc.0
 * (commit 1433bc01, identical on branch release-0.14 and in apis v0.13.2):
 * apis/metal3.io/v1alpha1/hostclaim_types.go (HostClaimSpec, HostSelector,
 * HostSelectorRequirement, HostClaimStatus, ObjectReference),
 * apis/metal3.io/v1alpha1/baremetalhost_types.go (Image, CustomDeploy) and
 * apis/metal3.io/v1alpha1/hardwaredata_types.go (HardwareDataSpec and the
 * HardwareDetails tree). `required` = fields without omitempty that the
 * upstream CRD (config/base/crds/bases) lists as required.
 */
const UPSTREAM: Record<string, { fields: string[]; required?: string[] }> = {
  HostClaimSpec: {
    fields: ['poweredOn', 'image', 'userData', 'networkData', 'metaData', 'customDeploy', 'hostSelector', 'consumerRef', 'failureDomain'],
    required: ['poweredOn'],
  },
  HostSelector: { fields: ['matchLabels', 'matchExpressions', 'inNamespace'] },
  HostSelectorRequirement: { fields: ['key', 'operator', 'values'], required: ['key', 'operator', 'values'] },
  HostClaimStatus: { fields: ['lastUpdated', 'conditions', 'bareMetalHost', 'hardwareData', 'poweredOn'] },
  ObjectReference: { fields: ['namespace', 'name'], required: ['namespace', 'name'] },
  Image: { fields: ['url', 'checksum', 'checksumType', 'format', 'ociAuthSecretName'], required: ['url'] },
  CustomDeploy: { fields: ['method'], required: ['method'] },
  HardwareDataSpec: { fields: ['hardware'] },
  HardwareDetails: { fields: ['systemVendor', 'firmware', 'ramMebibytes', 'nics', 'storage', 'cpu', 'hostname'] },
  HardwareSystemVendor: { fields: ['manufacturer', 'productName', 'serialNumber'] },
  Firmware: { fields: ['bios'] },
  BIOS: { fields: ['date', 'vendor', 'version'] },
  CPU: { fields: ['arch', 'model', 'clockMegahertz', 'flags', 'count'] },
  NIC: { fields: ['name', 'model', 'mac', 'ip', 'speedGbps', 'vlans', 'vlanId', 'pxe', 'lldp', 'pciAddress'] },
  VLAN: { fields: ['id', 'name'] },
  LLDP: { fields: ['switchID', 'portID', 'switchSystemName'] },
  Storage: {
    fields: [
      'name',
      'alternateNames',
      'rotational',
      'type',
      'sizeBytes',
      'vendor',
      'model',
      'serialNumber',
      'wwn',
      'wwnVendorExtension',
      'wwnWithExtension',
      'hctl',
    ],
  },
};
/** Our additions on top of upstream, per type. */
const EXTENSIONS: Record<string, string[]> = { HostClaimSpec: ['nodeReuse'] };

describe('wire compatibility with upstream metal3.io/v1alpha1 (v0.14.0-rc.0)', () => {
  const source = loadSchemaSource();

  it.each(Object.entries(UPSTREAM))('%s has exactly the upstream JSON fields', (type, expected) => {
    const schema = source.objectSchema(type);
    const fields = Object.keys(schema.properties ?? {}).sort();
    expect(fields).toEqual([...expected.fields, ...(EXTENSIONS[type] ?? [])].sort());
    expect([...(schema.required ?? [])].sort()).toEqual([...(expected.required ?? [])].sort());
  });

  it('uses the upstream wire types and enums', () => {
    const prop = (type: string, field: string): K8sSchema => source.deref(source.objectSchema(type).properties![field]!);
    expect(prop('HostClaimSpec', 'poweredOn').type).toBe('boolean');
    expect(prop('HostClaimSpec', 'userData').properties).toHaveProperty('namespace');
    expect(Object.keys(prop('HostClaimSpec', 'consumerRef').properties ?? {}).sort()).toEqual(
      ['apiVersion', 'fieldPath', 'kind', 'name', 'namespace', 'resourceVersion', 'uid'],
    );
    expect(prop('Image', 'checksumType').enum).toEqual(['md5', 'sha256', 'sha512', 'auto']);
    expect(prop('Image', 'format').enum).toEqual(['raw', 'qcow2', 'vdi', 'vmdk', 'live-iso']);
    expect(prop('HostClaimStatus', 'lastUpdated')).toMatchObject({ type: 'string', format: 'date-time' });
    expect(prop('HostClaimStatus', 'conditions').items?.$ref).toBe('#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Condition');
    expect(prop('Storage', 'sizeBytes')).toMatchObject({ type: 'integer', format: 'int64' });
    expect(prop('Storage', 'type').enum).toEqual(['HDD', 'SSD', 'NVME']);
    expect(prop('CPU', 'clockMegahertz')).toMatchObject({ type: 'number', format: 'double' });
    expect(prop('NIC', 'vlanId')).toMatchObject({ type: 'integer', format: 'int32', minimum: 0, maximum: 4094 });
  });

  it('marks nodeReuse as an extension of this API', () => {
    const nodeReuse = source.objectSchema('HostClaimSpec').properties?.['nodeReuse'];
    expect(nodeReuse?.type).toBe('string');
    expect(nodeReuse?.description).toMatch(/EXTENSION of this API/);
  });

  it('never exposes BMC details in HardwareData', () => {
    const names: string[] = [];
    const walk = (s: K8sSchema): void => {
      for (const [k, v] of Object.entries(s.properties ?? {})) {
        names.push(k);
        walk(v);
      }
      if (s.items !== undefined) walk(s.items);
    };
    walk(source.resolvedObjectSchema('HardwareData'));
    expect(names.length).toBeGreaterThan(30);
    for (const name of names) {
      expect(name).not.toMatch(/bmc|credential|password|username|secret|consumer|errorMessage/i);
      expect(name).not.toBe('address');
    }
  });
});

describe('OpenAPI documents with every verb declared', () => {
  const source = loadSchemaSource();
  const v3 = buildOpenAPIV3(allVerbsGV, source);
  const v2 = buildOpenAPIV2(allVerbsGV, source);

  it('resolves every $ref, in the right form for each version', () => {
    const v3Refs = collectRefs(v3);
    expect(v3Refs.length).toBeGreaterThan(50);
    for (const ref of v3Refs) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(v3.components?.schemas?.[ref.slice('#/components/schemas/'.length)], ref).toBeDefined();
    }
    const v2Refs = collectRefs(v2);
    expect(v2Refs.length).toBeGreaterThan(50);
    for (const ref of v2Refs) {
      expect(ref).toMatch(/^#\/definitions\//);
      expect(v2.definitions?.[ref.slice('#/definitions/'.length)], ref).toBeDefined();
    }
  });

  it('carries GVK arrays on the schemas of our kinds and their lists', () => {
    for (const kind of ['HostClaim', 'HostClaimList', 'HardwareData', 'HardwareDataList']) {
      const gvk = [{ group: GROUP, version: VERSION, kind }];
      const name = `io.metal3.tenancy.v1alpha1.${kind}`;
      const v3Schema = v3.components?.schemas?.[name] as Record<string, unknown> | undefined;
      expect(v3Schema?.['x-kubernetes-group-version-kind']).toEqual(gvk);
      expect(v2.definitions?.[name]?.['x-kubernetes-group-version-kind']).toEqual(gvk);
    }
    const hostClaim = v3.components?.schemas?.['io.metal3.tenancy.v1alpha1.HostClaim'] as Record<string, unknown>;
    expect(derefV3(v3, (hostClaim['properties'] as Record<string, unknown>)['metadata'])).toBe(
      v3.components?.schemas?.['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'],
    );
    expect((hostClaim['properties'] as Record<string, unknown>)['apiVersion']).toMatchObject({ type: 'string' });
    expect((hostClaim['properties'] as Record<string, unknown>)['kind']).toMatchObject({ type: 'string' });
  });

  it('gives every operation an ID, a tag, an action and a GVK object', () => {
    for (const doc of [v3, v2]) {
      const ops = operations(doc);
      // hostclaims: all-namespaces list, collection (3), item (4), status (3); hardwaredata: 3 reads.
      expect(ops.length).toBe(1 + 3 + 4 + 3 + 3);
      const ids = ops.map((o) => o.op['operationId']);
      expect(new Set(ids).size).toBe(ids.length);
      for (const { op } of ops) {
        expect(op['operationId']).toMatch(/^(list|create|read|replace|patch|delete)TenancyMetal3IoV1alpha1/);
        expect(op['tags']).toEqual(['tenancyMetal3Io_v1alpha1']);
        expect(['get', 'list', 'post', 'put', 'patch', 'delete', 'deletecollection']).toContain(op['x-kubernetes-action']);
        const gvk = op['x-kubernetes-group-version-kind'];
        expect(Array.isArray(gvk)).toBe(false);
        expect(gvk).toMatchObject({ group: GROUP, version: VERSION });
      }
    }
  });

  it('follows kube-apiserver CRD paths, operation IDs and actions', () => {
    const expectOp = (path: string, method: (typeof METHODS)[number], id: string, action: string): Record<string, unknown> => {
      const op = operations(v3).find((o) => o.path === path && o.method === method)?.op;
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op?.['operationId']).toBe(id);
      expect(op?.['x-kubernetes-action']).toBe(action);
      return op ?? {};
    };
    const list = expectOp(HC_COLLECTION, 'get', 'listTenancyMetal3IoV1alpha1NamespacedHostClaim', 'list');
    expectOp(`/apis/${GROUP}/${VERSION}/hostclaims`, 'get', 'listTenancyMetal3IoV1alpha1HostClaimForAllNamespaces', 'list');
    expectOp(HC_COLLECTION, 'post', 'createTenancyMetal3IoV1alpha1NamespacedHostClaim', 'post');
    expectOp(HC_COLLECTION, 'delete', 'deleteTenancyMetal3IoV1alpha1CollectionNamespacedHostClaim', 'deletecollection');
    expectOp(HC_ITEM, 'get', 'readTenancyMetal3IoV1alpha1NamespacedHostClaim', 'get');
    expectOp(HC_ITEM, 'put', 'replaceTenancyMetal3IoV1alpha1NamespacedHostClaim', 'put');
    const patch = expectOp(HC_ITEM, 'patch', 'patchTenancyMetal3IoV1alpha1NamespacedHostClaim', 'patch');
    const del = expectOp(HC_ITEM, 'delete', 'deleteTenancyMetal3IoV1alpha1NamespacedHostClaim', 'delete');
    expectOp(`${HC_ITEM}/status`, 'get', 'readTenancyMetal3IoV1alpha1NamespacedHostClaimStatus', 'get');
    expectOp(`${HC_ITEM}/status`, 'put', 'replaceTenancyMetal3IoV1alpha1NamespacedHostClaimStatus', 'put');
    expectOp(`${HC_ITEM}/status`, 'patch', 'patchTenancyMetal3IoV1alpha1NamespacedHostClaimStatus', 'patch');

    const names = (op: Record<string, unknown>): string[] =>
      ((op['parameters'] ?? []) as { name: string }[]).map((p) => p.name).sort();
    expect(names(list)).toEqual(
      [
        'allowWatchBookmarks',
        'continue',
        'fieldSelector',
        'labelSelector',
        'limit',
        'resourceVersion',
        'resourceVersionMatch',
        'sendInitialEvents',
        'timeoutSeconds',
        'watch',
      ].sort(),
    );
    expect(names(patch)).toEqual(['dryRun', 'fieldManager', 'fieldValidation', 'force']);
    expect(names(del)).toEqual(['dryRun', 'gracePeriodSeconds', 'orphanDependents', 'propagationPolicy']);
    const itemParams = (v3.paths[HC_ITEM]?.parameters ?? []) as OpenAPIV3.ParameterObject[];
    expect(itemParams.map((p) => `${p.in}:${p.name}:${String(p.required ?? false)}`)).toEqual([
      'path:name:true',
      'path:namespace:true',
      'query:pretty:false',
    ]);
    // List responses reference the list kind; deletes answer a Status.
    expect(collectRefs(list['responses'])).toContain('#/components/schemas/io.metal3.tenancy.v1alpha1.HostClaimList');
    expect(collectRefs(del['responses'])).toEqual(
      expect.arrayContaining(['#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Status']),
    );
  });

  it('lets kubectl explain find HostClaim and spec.hostSelector', () => {
    const gvk = { group: GROUP, version: VERSION, kind: 'HostClaim' };
    // kubectl/pkg/explain/v2: first path (of these) with an operation carrying the GVK object.
    const candidates = [
      `/apis/${GROUP}/${VERSION}/hostclaims`,
      `/apis/${GROUP}/${VERSION}/hostclaims/{name}`,
      HC_COLLECTION,
      HC_ITEM,
    ];
    const found = candidates.some((path) => {
      const item = v3.paths[path];
      return METHODS.some((m) => {
        const op = item?.[m] as Record<string, unknown> | undefined;
        return JSON.stringify(op?.['x-kubernetes-group-version-kind']) === JSON.stringify(gvk);
      });
    });
    expect(found).toBe(true);
    expect(v3.paths[HC_ITEM]?.get).toBeDefined();
    const entries = Object.entries(v3.components?.schemas ?? {}).filter(([, s]) => {
      const list = (s as Record<string, unknown>)['x-kubernetes-group-version-kind'];
      return Array.isArray(list) && list.some((g) => JSON.stringify(g) === JSON.stringify(gvk));
    });
    expect(entries.map(([name]) => name)).toEqual(['io.metal3.tenancy.v1alpha1.HostClaim']);
    const hostClaim = derefV3(v3, entries[0]![1]);
    const spec = derefV3(v3, (hostClaim['properties'] as Record<string, unknown>)['spec']);
    const hostSelector = derefV3(v3, (spec['properties'] as Record<string, unknown>)['hostSelector']);
    expect(propertyNames(hostSelector)).toEqual(['inNamespace', 'matchExpressions', 'matchLabels']);
    // Described refs are wrapped like kube-openapi does (OpenAPI 3.0 ignores $ref siblings).
    expect((hostClaim['properties'] as Record<string, unknown>)['spec']).toMatchObject({
      allOf: [{ $ref: '#/components/schemas/io.metal3.tenancy.v1alpha1.HostClaimSpec' }],
    });
  });

  it('never advertises strategic merge patch', () => {
    expect(JSON.stringify(v3)).not.toContain('strategic-merge-patch');
    expect(JSON.stringify(v2)).not.toContain('strategic-merge-patch');
    const v3Patches = operations(v3).filter((o) => o.method === 'patch');
    const v2Patches = operations(v2).filter((o) => o.method === 'patch');
    expect(v3Patches.length).toBe(2);
    expect(v2Patches.length).toBe(2);
    for (const { op } of v3Patches) {
      const content = (op['requestBody'] as OpenAPIV3.RequestBodyObject).content;
      expect(Object.keys(content).sort()).toEqual([...PATCH_CONTENT_TYPES].sort());
      expect(Object.keys(content).sort()).toEqual([
        'application/apply-patch+yaml',
        'application/json-patch+json',
        'application/merge-patch+json',
      ]);
    }
    for (const { op } of v2Patches) expect([...(op['consumes'] as string[])].sort()).toEqual([...PATCH_CONTENT_TYPES].sort());
  });

  it('only serves declared verbs: read-only HardwareData has no write operations', () => {
    const hd = operations(v3).filter((o) => o.path.includes('/hardwaredata'));
    expect(hd.map((o) => `${o.method} ${o.path}`).sort()).toEqual(
      [
        `get /apis/${GROUP}/${VERSION}/hardwaredata`,
        `get /apis/${GROUP}/${VERSION}/namespaces/{namespace}/hardwaredata`,
        `get /apis/${GROUP}/${VERSION}/namespaces/{namespace}/hardwaredata/{name}`,
      ].sort(),
    );
  });

  it('drops watch parameters when watch is not declared', () => {
    const gv = withVerbs(tenancyV1alpha1, () => ['list']);
    const list = buildOpenAPIV3(gv, source).paths[HC_COLLECTION]?.get;
    const names = (list?.parameters as OpenAPIV3.ParameterObject[]).map((p) => p.name);
    expect(names).toContain('labelSelector');
    expect(names).not.toContain('watch');
    expect(Object.keys((list?.responses['200'] as OpenAPIV3.ResponseObject).content ?? {})).toEqual(['application/json']);
  });

  it('uses cluster paths for a cluster-scoped resource', () => {
    const gv: ApiGroupVersion = {
      ...allVerbsGV,
      resources: allVerbsGV.resources.filter((r) => r.kind === 'HostClaim').map((r) => ({ ...r, namespaced: false })),
    };
    const paths = Object.keys(buildOpenAPIV2(gv, source).paths).sort();
    expect(paths).toEqual([
      `/apis/${GROUP}/${VERSION}/hostclaims`,
      `/apis/${GROUP}/${VERSION}/hostclaims/{name}`,
      `/apis/${GROUP}/${VERSION}/hostclaims/{name}/status`,
    ]);
    expect(buildOpenAPIV3(gv, source).paths[`/apis/${GROUP}/${VERSION}/hostclaims`]?.get?.operationId).toBe(
      'listTenancyMetal3IoV1alpha1HostClaim',
    );
  });

  it('emits no empty lists or maps (they would not survive a kube-openapi spec3 round trip)', () => {
    const empties: string[] = [];
    const walk = (v: unknown, where: string): void => {
      if (Array.isArray(v)) {
        if (v.length === 0) empties.push(where);
        v.forEach((x, i) => {
          walk(x, `${where}[${i}]`);
        });
      } else if (isRecord(v)) {
        if (Object.keys(v).length === 0 && !where.endsWith('.paths')) empties.push(where);
        for (const [k, x] of Object.entries(v)) walk(x, `${where}.${k}`);
      }
    };
    walk(v3, 'v3');
    walk(v2, 'v2');
    expect(empties).toEqual([]);
    expect(JSON.parse(JSON.stringify(v3))).toEqual(v3);
  });

  it('checks the source against the descriptors', () => {
    const broken: ApiGroupVersion = {
      ...allVerbsGV,
      resources: allVerbsGV.resources.map((r) => ({ ...r, listKind: `${r.kind}Items` })),
    };
    expect(() => buildOpenAPIV3(broken, source)).toThrow(/no definition io\.metal3\.tenancy\.v1alpha1\.HostClaimItems/);
  });
});

describe('OpenAPI documents with no verbs declared', () => {
  const source = loadSchemaSource();

  it('generates no paths but keeps the schemas', () => {
    const noVerbs: ApiGroupVersion = {
      ...tenancyV1alpha1,
      resources: tenancyV1alpha1.resources.map((r) => ({ ...r, verbs: [], subresources: r.subresources.map((s) => ({ ...s, verbs: [] })) })),
    };
    const v3 = buildOpenAPIV3(noVerbs, source);
    const v2 = buildOpenAPIV2(noVerbs, source);
    expect(v3.paths).toEqual({});
    expect(v2.paths).toEqual({});
    expect(v3.components?.schemas?.['io.metal3.tenancy.v1alpha1.HostClaim']).toBeDefined();
    expect(v2.definitions?.['io.metal3.tenancy.v1alpha1.HardwareData']).toBeDefined();
  });
});

describe('operation ID helper', () => {
  it('matches kube ToValidOperationID', () => {
    expect(toValidOperationID('tenancy.metal3.io', true)).toBe('TenancyMetal3Io');
    expect(toValidOperationID('tenancy.metal3.io', false)).toBe('tenancyMetal3Io');
    expect(toValidOperationID('v1alpha1', true)).toBe('V1alpha1');
    expect(toValidOperationID('1abc', false)).toBe('Abc'); // a leading digit is dropped and capitalizes
  });
});

describe('openAPIRouter', () => {
  let server: Server;
  let base: string;
  const hashOf = (body: ArrayBuffer): string => createHash('sha512').update(Buffer.from(body)).digest('hex').toUpperCase();
  const gvPath = `/openapi/v3/apis/${GROUP}/${VERSION}`;

  beforeAll(async () => {
    const app = express();
    app.use(withRequestInfo());
    app.use(openAPIRouter(allVerbsGV, loadSchemaSource()));
    const renderStatus: ErrorRequestHandler = (err: unknown, _req, res, _next) => {
      if (!(err instanceof ApiError)) {
        res.status(500).end();
        return;
      }
      res.status(err.code).json(err.toStatus());
    };
    app.use(renderStatus);
    server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve, reject) => {
      server.close((e) => {
        if (e) reject(e);
        else resolve();
      });
    });
  });

  const get = (path: string, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${base}${path}`, { headers, redirect: 'manual' });

  it('serves /openapi/v2 with a SHA-512 ETag and answers 304 to If-None-Match', async () => {
    const res = await get('/openapi/v2', { accept: 'application/json' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = await res.arrayBuffer();
    const etag = res.headers.get('etag');
    expect(etag).toBe(`"${hashOf(body)}"`);
    expect(etag).toMatch(/^"[0-9A-F]{128}"$/);
    const doc = JSON.parse(Buffer.from(body).toString('utf8')) as unknown;
    expect(doc).toMatchObject({ swagger: '2.0' });

    const again = await get('/openapi/v2', { 'if-none-match': etag! });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
    expect(await again.text()).toBe('');
    const weakList = await get('/openapi/v2', { 'if-none-match': `"nope", W/${etag!}` });
    expect(weakList.status).toBe(304);
    const other = await get('/openapi/v2', { 'if-none-match': '"nope"' });
    expect(other.status).toBe(200);
  });

  it('serves the v3 root pointing at the hashed group/version document', async () => {
    const root = await get('/openapi/v3');
    expect(root.status).toBe(200);
    const rootDoc = (await root.json()) as { paths: Record<string, { serverRelativeURL: string }> };
    expect(Object.keys(rootDoc.paths)).toEqual([`apis/${GROUP}/${VERSION}`]);
    const url = rootDoc.paths[`apis/${GROUP}/${VERSION}`]!.serverRelativeURL;
    expect(url).toMatch(new RegExp(`^${gvPath}\\?hash=[0-9A-F]{128}$`));

    const unhashed = await get(gvPath);
    const body = await unhashed.arrayBuffer();
    expect(url).toBe(`${gvPath}?hash=${hashOf(body)}`);
    expect(unhashed.headers.get('etag')).toBe(`"${hashOf(body)}"`);
    expect(unhashed.headers.get('cache-control')).toBeNull();

    const hashed = await get(url);
    expect(hashed.status).toBe(200);
    expect(hashed.headers.get('cache-control')).toBe('public, immutable');
    expect(hashed.headers.get('vary')).toBe('Accept');
    const expires = Date.parse(hashed.headers.get('expires') ?? '');
    expect(expires - Date.now()).toBeGreaterThan(364 * 24 * 3600 * 1000);
    expect(hashOf(await hashed.arrayBuffer())).toBe(hashOf(body));
    const doc = JSON.parse(Buffer.from(body).toString('utf8')) as OpenAPIV3.Document;
    expect(doc.openapi).toBe('3.0.0');
    expect(doc.paths[HC_ITEM]?.get).toBeDefined();
  });

  it('serves the current document for a stale hash, without redirecting', async () => {
    const stale = await get(`${gvPath}?hash=${'A'.repeat(128)}`);
    expect(stale.status).toBe(200);
    expect(stale.headers.get('location')).toBeNull();
    expect(stale.headers.get('cache-control')).toBe('no-cache, private');
    const current = await get(gvPath);
    expect(hashOf(await stale.arrayBuffer())).toBe(hashOf(await current.arrayBuffer()));
  });

  it('answers 406 with a Status to a protobuf-only Accept', async () => {
    for (const [path, accept] of [
      ['/openapi/v2', 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf'],
      [gvPath, 'application/com.github.proto-openapi.spec.v3@v1.0+protobuf'],
      [gvPath, 'application/com.github.proto-openapi.spec.v3.v1.0+protobuf'],
    ] as const) {
      const res = await get(path, { accept });
      expect(res.status).toBe(406);
      expect(await res.json()).toMatchObject({ kind: 'Status', code: 406, reason: 'NotAcceptable' });
    }
    const mixed = await get(gvPath, {
      accept: 'application/com.github.proto-openapi.spec.v3@v1.0+protobuf, application/json;q=0.5',
    });
    expect(mixed.status).toBe(200);
    expect((await get(gvPath, { accept: '*/*' })).status).toBe(200);
  });

  it('negotiates Accept and If-None-Match like kube', () => {
    expect(acceptsJson(undefined)).toBe(true);
    expect(acceptsJson('')).toBe(true);
    expect(acceptsJson('application/json')).toBe(true);
    expect(acceptsJson('application/*;q=0.1')).toBe(true);
    // goautoneg only orders by q; kube-openapi serves a q=0 range and ignores parameters.
    expect(acceptsJson('application/json;q=0')).toBe(true);
    expect(acceptsJson('*/json;as=Table')).toBe(true);
    expect(acceptsJson('application/yaml')).toBe(false);
    expect(etagMatches('*', '"X"')).toBe(true);
    expect(etagMatches(undefined, '"X"')).toBe(false);
    expect(etagMatches('"Y", W/"X"', '"X"')).toBe(true);
  });
});
