/**
 * test/kubeconform/schemas.ts: kube's /openapi/v2 definitions become
 * kubeconform's strict, self-contained per-kind schemas.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeKubeconformSchemas } from '../../kubeconform/schemas.js';

const openapi = {
  definitions: {
    'io.k8s.api.core.v1.Service': {
      type: 'object',
      properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, spec: { $ref: '#/definitions/io.k8s.api.core.v1.ServiceSpec' } },
      'x-kubernetes-group-version-kind': [{ group: '', version: 'v1', kind: 'Service' }],
    },
    'io.k8s.api.core.v1.ServiceSpec': {
      type: 'object',
      properties: { targetPort: { $ref: '#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString' }, selector: { type: 'object', additionalProperties: { type: 'string' } } },
    },
    'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { type: 'string', format: 'int-or-string' },
    'io.k8s.apimachinery.pkg.api.resource.Quantity': { description: 'q', type: 'string' },
    'io.example.v1.Widget': {
      type: 'object',
      properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { size: { $ref: '#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity' } } } },
      'x-kubernetes-group-version-kind': [{ group: 'example.io', version: 'v1', kind: 'Widget' }],
    },
  },
};

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'kubeconform-schemas-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

async function read(file: string): Promise<unknown> {
  return JSON.parse(await fs.readFile(path.join(dir, file), 'utf8'));
}

describe('writeKubeconformSchemas', () => {
  it('writes one schema per kind where kubeconform looks (the core group as v1), closed objects, ints or strings, and only the definitions each needs', async () => {
    expect(await writeKubeconformSchemas(openapi, dir)).toBe(2);
    expect((await fs.readdir(dir)).sort()).toEqual(['example.io', 'v1']);
    expect(await read('v1/v1/service.json')).toEqual({
      $schema: 'http://json-schema.org/draft-04/schema#',
      type: 'object',
      properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, spec: { $ref: '#/definitions/io.k8s.api.core.v1.ServiceSpec' } },
      'x-kubernetes-group-version-kind': [{ group: '', version: 'v1', kind: 'Service' }],
      additionalProperties: false,
      definitions: {
        'io.k8s.api.core.v1.Service': {
          type: 'object',
          properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, spec: { $ref: '#/definitions/io.k8s.api.core.v1.ServiceSpec' } },
          'x-kubernetes-group-version-kind': [{ group: '', version: 'v1', kind: 'Service' }],
          additionalProperties: false,
        },
        'io.k8s.api.core.v1.ServiceSpec': {
          type: 'object',
          properties: { targetPort: { $ref: '#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString' }, selector: { type: 'object', additionalProperties: { type: 'string' } } },
          additionalProperties: false,
        },
        'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { oneOf: [{ type: 'string' }, { type: 'integer' }] },
      },
    });
  });

  it('leaves objects that preserve unknown fields open, and lets quantities be numbers', async () => {
    await writeKubeconformSchemas(openapi, dir);
    const widget = (await read('example.io/v1/widget.json')) as { properties: { spec: Record<string, unknown> }; definitions: Record<string, unknown> };
    expect(widget.properties.spec['additionalProperties']).toBeUndefined();
    expect(Object.keys(widget.definitions).sort()).toEqual(['io.example.v1.Widget', 'io.k8s.apimachinery.pkg.api.resource.Quantity']);
    expect(widget.definitions['io.k8s.apimachinery.pkg.api.resource.Quantity']).toEqual({ description: 'q', oneOf: [{ type: 'string' }, { type: 'number' }] });
  });
});
