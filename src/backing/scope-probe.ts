/**
 * The fence's probe (consistent-read.ts, step 1): a consistent LIST of a
 * scope that tells its resourceVersion and each object's resourceVersion.
 *
 * - Metadata: a PartialObjectMetadataList, for any resource, in protobuf
 *   (metadata-protobuf.ts: only names, namespaces and resourceVersions are
 *   read; managedFields and the rest skipped), JSON from a server without
 *   it.
 * - Table: for a CRD this server owns, which carries the resourceVersion as a
 *   printer column (crd.ts `resourceVersionColumn`): a Table without objects
 *   (`includeObject=None`), each row only a name and a resourceVersion. A row
 *   names no namespace, so this probe is only for scopes in one namespace.
 *   A Table without the column (a CRD not yet upgraded, or changed by hand)
 *   falls back to the metadata probe, and the prober keeps to metadata for
 *   a minute before trying the Table again.
 */
import { revision } from '../api/rest/types.js';
import { resourceVersionColumn } from './crd.js';
import type { KubeClient } from './kube-client.js';
import { objectKey } from './shared-informers.js';

export type ProbeClient = Pick<KubeClient, 'list' | 'listVersions'>;

export interface ProbeResult {
  readonly resourceVersion: bigint;
  /** Probed object key → resourceVersion. */
  readonly items: ReadonlyMap<string, bigint>;
}

/** What is listed: the collection and the scope's selectors. */
export interface ProbeRequest {
  readonly path: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
}

/** How a fence probes: metadata only, or a Table of a CRD of ours whose objects all live in `namespace`. */
export type ProbeMethod = { readonly kind: 'metadata' } | { readonly kind: 'table'; readonly namespace: string };

/** meta.k8s.io/v1 Table, as kube-apiserver answers with includeObject=None (rows' objects null). */
export interface Table {
  readonly metadata: { readonly resourceVersion?: string };
  readonly columnDefinitions?: readonly { readonly name: string; readonly format?: string }[] | null;
  readonly rows?: readonly { readonly cells?: readonly unknown[] | null }[] | null;
}

/** After a Table it cannot read, a prober lists metadata for this long before trying the Table again. */
export const tableRetryMs = 60_000;

/**
 * Probes scopes of one resource by its method. A Table it cannot read (the
 * CRD lacks the column until a replica of this version updates it) costs a
 * second request, so for `tableRetryMs` after one it lists metadata only.
 */
export class ScopeProber {
  private tableUnreadableUntil = 0;

  constructor(
    private readonly client: ProbeClient,
    readonly method: ProbeMethod,
    private readonly now: () => number = Date.now,
  ) {}

  async probe(request: ProbeRequest): Promise<ProbeResult> {
    const query = { labelSelector: request.labelSelector, fieldSelector: request.fieldSelector };
    if (this.method.kind === 'table' && this.now() >= this.tableUnreadableUntil) {
      const table = await this.client.list<Table>(request.path, { ...query, includeObject: 'None' }, 'table');
      const read = readTable(table, this.method.namespace);
      if (read !== undefined) return read;
      this.tableUnreadableUntil = this.now() + tableRetryMs;
    }
    const list = await this.client.listVersions(request.path, query);
    const items = new Map<string, bigint>();
    for (const item of list.items) items.set(objectKey(item.namespace, item.name), revision(item.resourceVersion));
    return { resourceVersion: revision(list.resourceVersion), items };
  }
}

/**
 * The probe result a Table tells, its rows keyed in `namespace`; undefined
 * when it lacks the name or resourceVersion column, or a row's cells are not
 * a name and a resourceVersion (then the metadata probe decides).
 */
export function readTable(table: Table, namespace: string): ProbeResult | undefined {
  const columns = table.columnDefinitions ?? [];
  // kube marks the name column by its format (k8s.io/apimachinery metav1.TableColumnDefinition).
  const nameAt = columns.findIndex((column) => column.format === 'name');
  const resourceVersionAt = columns.findIndex((column) => column.name === resourceVersionColumn.name);
  if (nameAt < 0 || resourceVersionAt < 0) return undefined;
  const items = new Map<string, bigint>();
  for (const row of table.rows ?? []) {
    const name = row.cells?.[nameAt];
    const resourceVersion = row.cells?.[resourceVersionAt];
    if (typeof name !== 'string' || name === '' || typeof resourceVersion !== 'string') return undefined;
    const parsed = revision(resourceVersion);
    if (parsed < 0n) return undefined;
    items.set(objectKey(namespace, name), parsed);
  }
  return { resourceVersion: revision(table.metadata.resourceVersion), items };
}
