import { describe, expect, it } from 'vitest';

import { ApiError } from '../../../../src/api/status.js';
import {
  encodeWatchEventObject,
  humanDuration,
  negotiateOutput,
  newWatchOutputState,
  parseIncludeObject,
  toPartialObjectMetadata,
  toPartialObjectMetadataList,
  toTable,
  type OutputFormat,
  type ResponseFormat,
  type OutputTarget,
  type TableColumn,
} from '../../../../src/api/rest/output.js';
import type { ApiObject } from '../../../../src/api/rest/types.js';
import type { Status } from '../../../../src/api/status.js';

const G = 'tenancy.metal3.io';
const V = 'v1alpha1';
const K = 'HostClaim';

const negotiated = (accept: string | undefined, target: OutputTarget): ResponseFormat =>
  negotiateOutput(accept, target);

function apiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected an ApiError');
}

const NOT_ACCEPTABLE = 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf';

// Accept headers as the clients send them (protocol reference §3.1).
const KUBECTL_GET =
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const METADATA_LIST =
  'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const METADATA_OBJECT =
  'application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

describe('negotiateOutput', () => {
  it('serves kubectl get a v1 Table for objects, lists and watches', () => {
    for (const target of ['object', 'list', 'watch'] as const) {
      expect(negotiated(KUBECTL_GET, target)).toEqual({ kind: 'table', version: 'v1' });
    }
  });

  it('serves a v1beta1 Table when that is preferred', () => {
    const accept = 'application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
    expect(negotiated(accept, 'list')).toEqual({ kind: 'table', version: 'v1beta1' });
  });

  it('serves JSON to controller-runtime, client-go, kubectl -o yaml and clients without Accept', () => {
    for (const accept of [undefined, '', 'application/json', '*/*', 'application/*', 'application/json, */*']) {
      expect(negotiated(accept, 'list')).toEqual({ kind: 'json' });
      expect(negotiated(accept, 'object')).toEqual({ kind: 'json' });
      expect(negotiated(accept, 'watch')).toEqual({ kind: 'json' });
    }
  });

  it('serves the metadata client (GC, quota) PartialObjectMetadata(List) in JSON, skipping protobuf', () => {
    expect(negotiated(METADATA_LIST, 'list')).toEqual({ kind: 'partialObjectMetadata', version: 'v1' });
    expect(negotiated(METADATA_OBJECT, 'object')).toEqual({ kind: 'partialObjectMetadata', version: 'v1' });
    // client-go's metadata Watch asks for PartialObjectMetadata per event.
    expect(negotiated(METADATA_OBJECT, 'watch')).toEqual({ kind: 'partialObjectMetadata', version: 'v1' });
    const beta = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1';
    expect(negotiated(beta, 'list')).toEqual({ kind: 'partialObjectMetadata', version: 'v1beta1' });
  });

  it('orders ranges by q-value, then specificity', () => {
    const accept = 'application/json;q=0.5,application/json;as=Table;v=v1;g=meta.k8s.io';
    expect(negotiated(accept, 'list')).toEqual({ kind: 'table', version: 'v1' });
    expect(negotiated('text/html,*/*;q=0.1', 'object')).toEqual({ kind: 'json' });
  });

  it('converts under a wildcard range, as kube tries JSON first', () => {
    expect(negotiated('*/*;as=Table;g=meta.k8s.io;v=v1', 'list')).toEqual({ kind: 'table', version: 'v1' });
  });

  it('accepts stream=watch and sv=v1, skips other values', () => {
    expect(negotiated('application/json;stream=watch', 'watch')).toEqual({ kind: 'json' });
    expect(negotiated('application/json;sv=v1', 'list')).toEqual({ kind: 'json' });
    expect(apiError(() => negotiated('application/json;stream=other', 'watch')).message).toBe(NOT_ACCEPTABLE);
    expect(apiError(() => negotiated('application/json;sv=v2', 'list')).message).toBe(NOT_ACCEPTABLE);
  });

  it('serves objects and lists as YAML where kube does, never a watch (kube has no YAML stream serializer) nor a conversion', () => {
    expect(negotiated('application/yaml', 'object')).toEqual({ kind: 'yaml' });
    expect(negotiated('application/yaml', 'list')).toEqual({ kind: 'yaml' });
    expect(negotiated('application/yaml, application/json', 'list')).toEqual({ kind: 'yaml' });
    expect(negotiated('application/*', 'object')).toEqual({ kind: 'json' });
    expect(negotiated('application/yaml, application/json', 'watch')).toEqual({ kind: 'json' });
    expect(apiError(() => negotiated('application/yaml', 'watch')).code).toBe(406);
    expect(negotiated('application/yaml;as=Table;g=meta.k8s.io;v=v1, application/json', 'list')).toEqual({ kind: 'json' });
  });

  it('orders by q like goautoneg but never drops a range: q=0 and an unparsable q are served', () => {
    for (const accept of ['application/json;q=0', '*/*;q=0', 'application/json;q=abc', 'application/json;q= 0.5']) {
      expect(negotiated(accept, 'object'), accept).toEqual({ kind: 'json' });
    }
    expect(negotiated('application/json;q=0,application/json;as=Table;g=meta.k8s.io;v=v1;q=0.1', 'list')).toEqual({ kind: 'table', version: 'v1' });
    // Specific before wildcard at equal q; type and subtype compared as sent.
    expect(negotiated('*/*;as=Table;g=meta.k8s.io;v=v1,application/json', 'list')).toEqual({ kind: 'json' });
    expect(apiError(() => negotiated('Application/JSON', 'object')).code).toBe(406);
    expect(apiError(() => negotiated('*/json', 'object')).code).toBe(406);
  });

  it('answers 406 NotAcceptable listing what it serves when nothing is acceptable', () => {
    for (const accept of [
      'application/vnd.kubernetes.protobuf',
      'text/plain',
      'application/',
      'json',
      'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
    ]) {
      const err = apiError(() => negotiated(accept, 'list'));
      expect(err.code).toBe(406);
      expect(err.toStatus()).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: NOT_ACCEPTABLE,
        reason: 'NotAcceptable',
        code: 406,
      });
    }
  });

  it('skips conversions to other groups, versions or kinds (406 when nothing else is acceptable)', () => {
    for (const accept of [
      'application/json;as=Table;g=meta.k8s.io;v=v2',
      'application/json;as=Table;v=v1',
      'application/json;as=Table',
      'application/json;as=Status;g=meta.k8s.io;v=v1',
      'application/json;as=HostClaim;g=tenancy.metal3.io;v=v1alpha1',
      'application/json;g=meta.k8s.io;v=v1',
      'application/yaml;as=Table;g=meta.k8s.io;v=v1',
    ]) {
      expect(apiError(() => negotiated(accept, 'list')).message, accept).toBe(NOT_ACCEPTABLE);
      expect(negotiated(`${accept},application/json`, 'list'), accept).toEqual({ kind: 'json' });
    }
  });

  it('refuses a PartialObjectMetadata kind that does not fit the target, without falling back', () => {
    const list = apiError(() => negotiated(METADATA_OBJECT, 'list'));
    expect(list.code).toBe(406);
    expect(list.reason).toBe('NotAcceptable');
    expect(list.message).toBe(
      'you requested PartialObjectMetadata, but the requested object is a list (*unstructured.UnstructuredList)',
    );
    const object = apiError(() => negotiated(METADATA_LIST, 'object'));
    expect(object.code).toBe(406);
    expect(object.message).toBe(
      'you requested PartialObjectMetadataList, but the requested object is not a list (*unstructured.Unstructured)',
    );
  });

  it('streams plain objects when a watch asks for PartialObjectMetadataList, as kube does', () => {
    expect(negotiated(METADATA_LIST, 'watch')).toEqual({ kind: 'json' });
  });
});

describe('parseIncludeObject', () => {
  const parse = (query: string) => parseIncludeObject(new URLSearchParams(query));

  it('defaults to Metadata', () => {
    expect(parse('')).toBe('Metadata');
    expect(parse('includeObject=')).toBe('Metadata');
    expect(parse('limit=500')).toBe('Metadata');
  });

  it('accepts None, Metadata and Object, taking the first value', () => {
    expect(parse('includeObject=None')).toBe('None');
    expect(parse('includeObject=Metadata')).toBe('Metadata');
    expect(parse('includeObject=Object')).toBe('Object');
    expect(parse('includeObject=Object&includeObject=bogus')).toBe('Object');
  });

  it('rejects anything else with 400 and kube wording', () => {
    const err = apiError(() => parse('includeObject=object'));
    expect(err.code).toBe(400);
    expect(err.reason).toBe('BadRequest');
    expect(err.message).toBe(
      `Unable to convert to Table as requested: includeObject: Invalid value: "object": must be 'Metadata', 'Object', 'None', or empty`,
    );
    // The value is quoted with encoding/json, which escapes HTML characters.
    expect(apiError(() => parse('includeObject=%3Cb%3E%22x')).message).toBe(
      `Unable to convert to Table as requested: includeObject: Invalid value: "\\u003cb\\u003e\\"x": must be 'Metadata', 'Object', 'None', or empty`,
    );
  });
});

// Ported from k8s.io/apimachinery/pkg/util/duration/duration_test.go
// (TestHumanDuration and TestHumanDurationBoundaries), durations in ms.
describe('humanDuration (apimachinery duration_test.go)', () => {
  const SECOND = 1000;
  const MINUTE = 60 * SECOND;
  const HOUR = 60 * MINUTE;
  const DAY = 24 * HOUR;
  const NANOSECOND = 1e-6;

  it.each([
    [SECOND, '1s'],
    [70 * SECOND, '70s'],
    [190 * SECOND, '3m10s'],
    [70 * MINUTE, '70m'],
    [47 * HOUR, '47h'],
    [49 * HOUR, '2d1h'],
    [(8 * 24 + 2) * HOUR, '8d'],
    [367 * 24 * HOUR, '367d'],
    [(365 * 2 * 24 + 25) * HOUR, '2y1d'],
    [(365 * 8 * 24 + 2) * HOUR, '8y'],
  ])('TestHumanDuration %d ms → %s', (ms, want) => {
    expect(humanDuration(ms)).toBe(want);
  });

  it.each([
    [-2 * SECOND, '<invalid>'],
    [-2 * SECOND + NANOSECOND, '0s'],
    [0, '0s'],
    [SECOND - 1, '0s'],
    [2 * MINUTE - 1, '119s'],
    [2 * MINUTE, '2m'],
    [2 * MINUTE + SECOND, '2m1s'],
    [10 * MINUTE - 1, '9m59s'],
    [10 * MINUTE, '10m'],
    [10 * MINUTE + SECOND, '10m'],
    [3 * HOUR - 1, '179m'],
    [3 * HOUR, '3h'],
    [3 * HOUR + MINUTE, '3h1m'],
    [8 * HOUR - 1, '7h59m'],
    [8 * HOUR, '8h'],
    [8 * HOUR + 59 * MINUTE, '8h'],
    [2 * DAY - 1, '47h'],
    [2 * DAY, '2d'],
    [2 * DAY + HOUR, '2d1h'],
    [8 * DAY - 1, '7d23h'],
    [8 * DAY, '8d'],
    [8 * DAY + 23 * HOUR, '8d'],
    [2 * 365 * DAY - 1, '729d'],
    [2 * 365 * DAY, '2y'],
    [2 * 365 * DAY + 23 * HOUR, '2y'],
    [2 * 365 * DAY + 23 * HOUR + 59 * MINUTE, '2y'],
    [2 * 365 * DAY + DAY - 1, '2y'],
    [2 * 365 * DAY + DAY, '2y1d'],
    [3 * 365 * DAY, '3y'],
    [4 * 365 * DAY, '4y'],
    [5 * 365 * DAY, '5y'],
    [6 * 365 * DAY, '6y'],
    [7 * 365 * DAY, '7y'],
    [8 * 365 * DAY - 1, '7y364d'],
    [8 * 365 * DAY, '8y'],
    [8 * 365 * DAY + 364 * DAY, '8y'],
    [9 * 365 * DAY, '9y'],
  ])('TestHumanDurationBoundaries %d ms → %s', (ms, want) => {
    expect(humanDuration(ms)).toBe(want);
  });
});

const NOW = Date.parse('2026-08-01T12:00:00Z');
const now = (): number => NOW;

function claim(name: string, extra: Partial<ApiObject['metadata']> = {}, rest: Record<string, unknown> = {}): ApiObject {
  return {
    apiVersion: `${G}/${V}`,
    kind: K,
    metadata: {
      name,
      namespace: 'team-a',
      uid: `uid-${name}`,
      resourceVersion: '42',
      creationTimestamp: '2026-08-01T11:55:00Z',
      ...extra,
    },
    spec: { image: { url: 'http://img' } },
    ...rest,
  };
}

const COLUMNS: readonly TableColumn[] = [
  {
    name: 'Host',
    type: 'string',
    description: 'The BareMetalHost bound to the claim.',
    priority: 0,
    value: (o) => (o['status'] as { host?: unknown } | undefined)?.host,
  },
  {
    name: 'Image',
    type: 'string',
    format: 'uri',
    description: 'The image deployed.',
    priority: 1,
    value: (o) => (o['spec'] as { image?: { url?: unknown } }).image?.url,
  },
];

describe('toTable', () => {
  it('renders a list the way kube renders a CRD list', () => {
    const objects = [claim('a', {}, { status: { host: 'bmh-1' } }), claim('b', { creationTimestamp: '2026-07-30T09:00:00Z' })];
    const table = toTable(objects, COLUMNS, {
      includeObject: 'Metadata',
      version: 'v1',
      listMeta: { resourceVersion: '99', continue: 'tok', remainingItemCount: 0 },
      now,
    });
    expect(table).toEqual({
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: '99', continue: 'tok', remainingItemCount: 0 },
      columnDefinitions: [
        { name: 'Name', type: 'string', format: 'name', description: 'Name of the object, unique within its namespace.', priority: 0 },
        { name: 'Host', type: 'string', format: '', description: 'The BareMetalHost bound to the claim.', priority: 0 },
        { name: 'Image', type: 'string', format: 'uri', description: 'The image deployed.', priority: 1 },
        { name: 'Age', type: 'date', format: '', description: 'Time since the object was created.', priority: 0 },
      ],
      rows: [
        {
          cells: ['a', 'bmh-1', 'http://img', '5m'],
          object: {
            kind: 'PartialObjectMetadata',
            apiVersion: 'meta.k8s.io/v1',
            metadata: {
              name: 'a',
              namespace: 'team-a',
              uid: 'uid-a',
              resourceVersion: '42',
              creationTimestamp: '2026-08-01T11:55:00Z',
            },
          },
        },
        {
          cells: ['b', null, 'http://img', '2d3h'],
          object: {
            kind: 'PartialObjectMetadata',
            apiVersion: 'meta.k8s.io/v1',
            metadata: {
              name: 'b',
              namespace: 'team-a',
              uid: 'uid-b',
              resourceVersion: '42',
              creationTimestamp: '2026-07-30T09:00:00Z',
            },
          },
        },
      ],
    });
  });

  it('serializes like kube: empty rows as [], empty list meta as {}', () => {
    const table = toTable([], COLUMNS, { includeObject: 'Metadata', version: 'v1', now });
    expect(table.rows).toEqual([]);
    expect(JSON.stringify(table.metadata)).toBe('{}');
  });

  it('includes the full object for includeObject=Object and null for None', () => {
    const object = claim('a');
    const full = toTable([object], COLUMNS, { includeObject: 'Object', version: 'v1', now });
    expect(full.rows[0]?.object).toBe(object);
    const none = toTable([object], COLUMNS, { includeObject: 'None', version: 'v1', now });
    expect(none.rows[0]?.object).toBeNull();
    expect(JSON.stringify(none.rows[0])).toBe('{"cells":["a",null,"http://img","5m"],"object":null}');
  });

  it('keeps the initial-events-end bookmark metadata even for includeObject=None', () => {
    const bookmark: ApiObject = {
      apiVersion: `${G}/${V}`,
      kind: K,
      metadata: { resourceVersion: '77', annotations: { 'k8s.io/initial-events-end': 'true' } },
    };
    const table = toTable([bookmark], [], { includeObject: 'None', version: 'v1', now });
    expect(table.rows[0]).toEqual({
      cells: ['', null],
      object: {
        kind: 'PartialObjectMetadata',
        apiVersion: 'meta.k8s.io/v1',
        metadata: { resourceVersion: '77', annotations: { 'k8s.io/initial-events-end': 'true' } },
      },
    });
  });

  it('uses v1beta1 for the table and its row objects when asked', () => {
    const table = toTable([claim('a')], [], { includeObject: 'Metadata', version: 'v1beta1', now });
    expect(table.apiVersion).toBe('meta.k8s.io/v1beta1');
    expect(table.rows[0]?.object).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1beta1' });
  });

  it('encodes suppressed headers as columnDefinitions: null', () => {
    const table = toTable([claim('a')], COLUMNS, { includeObject: 'None', version: 'v1', noHeaders: true, now });
    expect(table.columnDefinitions).toBeNull();
  });

  it('renders Age like the CRD convertor renders .metadata.creationTimestamp', () => {
    const age = (creationTimestamp: string | undefined): unknown => {
      const object = claim('a');
      if (creationTimestamp === undefined) delete object.metadata.creationTimestamp;
      else object.metadata.creationTimestamp = creationTimestamp;
      const row = toTable([object], [], { includeObject: 'None', version: 'v1', now }).rows[0];
      return row?.cells[1];
    };
    expect(age('2026-08-01T11:55:00Z')).toBe('5m');
    expect(age('2026-07-30T09:00:00Z')).toBe('2d3h');
    expect(age('2026-08-01T11:58:10Z')).toBe('110s');
    expect(age('2026-08-01T13:55:00+02:00')).toBe('5m');
    expect(age('2026-08-01T11:56:49.5Z')).toBe('3m10s');
    expect(age('2026-08-01T11:56:49,5Z')).toBe('3m10s');
    expect(age('2026-08-01T12:00:01Z')).toBe('0s'); // within the 2 s skew allowance
    expect(age('2026-08-01T12:00:10Z')).toBe('<invalid>'); // in the future
    expect(age('2026-08-01t11:55:00z')).toBe('<invalid>');
    expect(age('2026-08-01 11:55:00Z')).toBe('<invalid>');
    expect(age('2026-02-30T11:55:00Z')).toBe('<invalid>');
    expect(age('')).toBe('<unknown>');
    expect(age(undefined)).toBeNull();
  });

  it('renders cells per column type exactly like the CRD convertor', () => {
    const column = (type: TableColumn['type'], value: unknown): TableColumn => ({
      name: type,
      type,
      description: '',
      priority: 0,
      value: () => value,
    });
    const cells = (type: TableColumn['type'], values: unknown[]): unknown[] =>
      values.map((value) => toTable([claim('a')], [column(type, value)], { includeObject: 'None', version: 'v1', now }).rows[0]?.cells[1]);

    // Expected values produced by the Go convertor (tableconvertor.ConvertToTable) on the same JSON.
    expect(cells('string', [undefined, null, 'x', true, 1.5, 3, 12345678901, 1234567.5, 0.00001, { b: 1, a: '<' }, ['a', 2]])).toEqual([
      null,
      '<no value>',
      'x',
      'true',
      '1.5',
      '3',
      '12345678901',
      '1.2345675e+06',
      '1e-05',
      '{"a":"\\u003c","b":1}',
      '["a",2]',
    ]);
    expect(cells('integer', [undefined, null, 2.7, -2.7, 3, '3', true])).toEqual([null, null, 2, -2, 3, null, null]);
    expect(cells('number', [undefined, null, 1234567.5, 3, '4'])).toEqual([null, null, 1234567.5, 3, null]);
    expect(cells('boolean', [undefined, null, true, false, 'true'])).toEqual([null, null, true, false, null]);
    expect(cells('date', [undefined, null, 5, '', 'null', 'garbage', '2026-08-01T11:00:00Z'])).toEqual([
      null,
      null,
      null,
      '<unknown>',
      '<unknown>',
      '<invalid>',
      '60m',
    ]);
  });
});

describe('PartialObjectMetadata', () => {
  it('keeps only ObjectMeta, re-encoded as kube does', () => {
    const object = claim('a', {
      generation: 0,
      labels: {},
      finalizers: [],
      annotations: { a: 'b' },
      creationTimestamp: '2020-01-01T00:00:00.123+02:00',
      deletionGracePeriodSeconds: 0,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: 'n', uid: 'u', controller: true }],
      managedFields: [{ manager: 'm', operation: 'Update', time: '2020-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }],
    });
    (object.metadata as Record<string, unknown>)['unknownField'] = 'dropped';
    expect(toPartialObjectMetadata(object, 'v1')).toEqual({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: {
        name: 'a',
        namespace: 'team-a',
        uid: 'uid-a',
        resourceVersion: '42',
        creationTimestamp: '2019-12-31T22:00:00Z',
        deletionGracePeriodSeconds: 0,
        annotations: { a: 'b' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: 'n', uid: 'u', controller: true }],
        managedFields: [
          { manager: 'm', operation: 'Update', time: '2020-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } },
        ],
      },
    });
  });

  it('drops a map or list with a wrongly typed member, as the unstructured accessors do', () => {
    const object = claim('a', {
      labels: { a: 1 } as unknown as Record<string, string>,
      managedFields: [{ manager: 'm', time: 'yesterday' }],
      deletionTimestamp: 'soon',
    });
    const metadata = toPartialObjectMetadata(object, 'v1').metadata;
    expect(metadata.labels).toBeUndefined();
    expect(metadata.managedFields).toBeUndefined();
    expect(metadata.deletionTimestamp).toBeUndefined();
  });

  it('builds a PartialObjectMetadataList whose items carry their own kind', () => {
    const list = toPartialObjectMetadataList([claim('a'), claim('b')], { resourceVersion: '99', continue: '' }, 'v1');
    expect(list).toEqual({
      kind: 'PartialObjectMetadataList',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: '99' },
      items: [
        {
          kind: 'PartialObjectMetadata',
          apiVersion: 'meta.k8s.io/v1',
          metadata: { name: 'a', namespace: 'team-a', uid: 'uid-a', resourceVersion: '42', creationTimestamp: '2026-08-01T11:55:00Z' },
        },
        {
          kind: 'PartialObjectMetadata',
          apiVersion: 'meta.k8s.io/v1',
          metadata: { name: 'b', namespace: 'team-a', uid: 'uid-b', resourceVersion: '42', creationTimestamp: '2026-08-01T11:55:00Z' },
        },
      ],
    });
  });

  it('encodes an empty list with items: null, like kube', () => {
    const list = toPartialObjectMetadataList([], { resourceVersion: '7' }, 'v1beta1');
    expect(JSON.stringify(list)).toBe(
      '{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1beta1","metadata":{"resourceVersion":"7"},"items":null}',
    );
  });
});

describe('encodeWatchEventObject', () => {
  const table: OutputFormat = { kind: 'table', version: 'v1' };

  it('sends one-row tables, with columnDefinitions on the first event only', () => {
    const state = newWatchOutputState({ columns: COLUMNS, includeObject: 'Metadata', now });
    const first = encodeWatchEventObject(table, claim('a', { resourceVersion: '10' }), state);
    const second = encodeWatchEventObject(table, claim('b', { resourceVersion: '11' }), state);
    expect(first).toMatchObject({
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: '10' },
      rows: [{ cells: ['a', null, 'http://img', '5m'], object: { kind: 'PartialObjectMetadata' } }],
    });
    expect((first as { columnDefinitions: unknown[] }).columnDefinitions.map((c) => (c as { name: string }).name)).toEqual([
      'Name',
      'Host',
      'Image',
      'Age',
    ]);
    expect(second).toMatchObject({ kind: 'Table', metadata: { resourceVersion: '11' }, columnDefinitions: null });
    expect((second as { rows: unknown[] }).rows).toHaveLength(1);
  });

  it('passes Status objects through; they still use up the headers, as in kube', () => {
    const state = newWatchOutputState({ columns: COLUMNS, now });
    const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old', reason: 'Expired', code: 410 };
    expect(encodeWatchEventObject(table, status, state)).toBe(status);
    expect(encodeWatchEventObject(table, claim('a'), state)).toMatchObject({ columnDefinitions: null });
  });

  it('sends PartialObjectMetadata events, or the objects themselves for JSON', () => {
    const state = newWatchOutputState();
    const object = claim('a');
    expect(encodeWatchEventObject({ kind: 'partialObjectMetadata', version: 'v1' }, object, state)).toEqual(
      toPartialObjectMetadata(object, 'v1'),
    );
    expect(encodeWatchEventObject({ kind: 'json' }, object, state)).toBe(object);
    expect(state.headersSent).toBe(false);
  });
});
