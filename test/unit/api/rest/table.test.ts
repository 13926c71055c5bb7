import { describe, expect, it } from 'vitest';

import { humanDuration, parseIncludeObject, toTable, type TableColumn } from '../../../../src/api/rest/table.js';
import type { ApiObject } from '../../../../src/api/rest/types.js';
import { apiError } from '../api-errors.js';
import { claim, COLUMNS, G, K, now, V } from './output-fixtures.js';

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
