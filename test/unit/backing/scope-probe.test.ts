import { describe, expect, it } from 'vitest';
import { resourceVersionColumn } from '../../../src/backing/crd.js';
import type { ListRepresentation } from '../../../src/backing/kube-client.js';
import type { CollectionVersions } from '../../../src/backing/metadata-protobuf.js';
import { readTable, ScopeProber, tableRetryMs, type ProbeMethod, type Table } from '../../../src/backing/scope-probe.js';

/** As kube-apiserver answered a CR's `as=Table` list with includeObject=None (v1.37, captured with curl): objects null. */
function table(rows: unknown[][], columns = [{ name: 'Name', format: 'name' }, { name: resourceVersionColumn.name, format: '' }]): Table {
  return { metadata: { resourceVersion: '9420' }, columnDefinitions: columns, rows: rows.map((cells) => ({ cells, object: null })) };
}

describe('readTable', () => {
  it('reads each row\'s name and resourceVersion, keyed in the namespace, at the Table\'s resourceVersion', () => {
    const read = readTable(table([['tenant-a.c1', '380'], ['tenant-b.c2', '386']]), 'hostclaim-system');
    expect(read).toEqual({ resourceVersion: 9420n, items: new Map([['hostclaim-system/tenant-a.c1', 380n], ['hostclaim-system/tenant-b.c2', 386n]]) });
  });

  it('finds the columns by the name format and the column name, in whatever order', () => {
    const columns = [{ name: resourceVersionColumn.name, format: '' }, { name: 'Age', format: '' }, { name: 'Name', format: 'name' }];
    expect(readTable(table([['7', '1m', 'x']], columns), 'ns')?.items).toEqual(new Map([['ns/x', 7n]]));
  });

  it('reads an empty scope (rows empty or null)', () => {
    expect(readTable(table([]), 'ns')).toEqual({ resourceVersion: 9420n, items: new Map() });
    expect(readTable({ metadata: { resourceVersion: '5' }, columnDefinitions: table([]).columnDefinitions ?? null, rows: null }, 'ns')).toEqual({ resourceVersion: 5n, items: new Map() });
  });

  it('cannot read a Table without the resourceVersion column (a CRD not yet upgraded: Name, Age)', () => {
    expect(readTable(table([['x', '1m']], [{ name: 'Name', format: 'name' }, { name: 'Age', format: '' }]), 'ns')).toBeUndefined();
    expect(readTable({ metadata: {}, columnDefinitions: null, rows: null }, 'ns')).toBeUndefined();
  });

  it('cannot read a row whose cells are not a name and a resourceVersion', () => {
    expect(readTable(table([['x', '5'], ['y', null]]), 'ns')).toBeUndefined();
    expect(readTable(table([['x', 'v5']]), 'ns')).toBeUndefined();
    expect(readTable(table([['', '5']]), 'ns')).toBeUndefined();
    expect(readTable({ metadata: {}, columnDefinitions: table([]).columnDefinitions ?? null, rows: [{ cells: null }] }, 'ns')).toBeUndefined();
  });
});

/** A client answering each representation as the test says, recording the requests. */
class Client {
  readonly requests: [string, Record<string, string | undefined>, ListRepresentation][] = [];
  constructor(private readonly tableAnswer: Table) {}

  list<T>(path: string, query: Record<string, string | undefined>, representation: ListRepresentation): Promise<T> {
    this.requests.push([path, query, representation]);
    if (representation === 'table') return Promise.resolve(this.tableAnswer as T);
    throw new Error(`unexpected ${representation} list`);
  }

  listVersions(path: string, query: Record<string, string | undefined>): Promise<CollectionVersions> {
    this.requests.push([path, query, 'metadata']);
    return Promise.resolve({ resourceVersion: '30', items: [{ namespace: 'ns', name: 'x', resourceVersion: '8' }] });
  }
}

describe('ScopeProber', () => {
  const request = { path: '/apis/g/v1/namespaces/ns/things', labelSelector: 'a=b', fieldSelector: undefined };
  const selectors = { labelSelector: 'a=b', fieldSelector: undefined };
  const tableProbe: ProbeMethod = { kind: 'table', namespace: 'ns' };

  it('lists metadata only for a resource whose CRD is not ours', async () => {
    const client = new Client(table([['x', '9']]));
    expect(await new ScopeProber(client, { kind: 'metadata' }).probe(request)).toEqual({ resourceVersion: 30n, items: new Map([['ns/x', 8n]]) });
    expect(client.requests).toEqual([[request.path, selectors, 'metadata']]);
  });

  it('lists a Table without objects for a CRD of ours', async () => {
    const client = new Client(table([['x', '9']]));
    expect(await new ScopeProber(client, tableProbe).probe(request)).toEqual({ resourceVersion: 9420n, items: new Map([['ns/x', 9n]]) });
    expect(client.requests).toEqual([[request.path, { ...selectors, includeObject: 'None' }, 'table']]);
  });

  it('falls back to metadata when the Table lacks the resourceVersion column', async () => {
    const client = new Client(table([['x', '1m']], [{ name: 'Name', format: 'name' }, { name: 'Age', format: '' }]));
    expect(await new ScopeProber(client, tableProbe).probe(request)).toEqual({ resourceVersion: 30n, items: new Map([['ns/x', 8n]]) });
    expect(client.requests.map(([, , representation]) => representation)).toEqual(['table', 'metadata']);
  });

  it('keeps to metadata for a minute after a Table it could not read, then tries the Table again', async () => {
    const client = new Client(table([['x', '1m']], [{ name: 'Name', format: 'name' }, { name: 'Age', format: '' }]));
    let now = 1_000;
    const prober = new ScopeProber(client, tableProbe, () => now);
    const kinds = (): ListRepresentation[] => client.requests.map(([, , representation]) => representation);
    await prober.probe(request);
    expect(kinds()).toEqual(['table', 'metadata']);
    now += tableRetryMs - 1;
    await prober.probe(request);
    expect(kinds()).toEqual(['table', 'metadata', 'metadata']);
    now += 1;
    await prober.probe(request);
    expect(kinds()).toEqual(['table', 'metadata', 'metadata', 'table', 'metadata']);
  });

  it('keeps to the Table while it can read it', async () => {
    const client = new Client(table([['x', '9']]));
    const prober = new ScopeProber(client, tableProbe);
    await prober.probe(request);
    await prober.probe(request);
    expect(client.requests.map(([, , representation]) => representation)).toEqual(['table', 'table']);
  });
});
