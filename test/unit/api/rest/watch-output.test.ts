import { describe, expect, it } from 'vitest';

import type { OutputFormat } from '../../../../src/api/rest/output-format.js';
import { toPartialObjectMetadata } from '../../../../src/api/rest/partial-object-metadata.js';
import { encodeWatchEventObject, newWatchOutputState } from '../../../../src/api/rest/watch-output.js';
import type { Status } from '../../../../src/api/status.js';
import { claim, COLUMNS, now } from './output-fixtures.js';

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
