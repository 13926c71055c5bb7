/**
 * Which objects a collection holds, at which resourceVersions, read from
 * kube-apiserver's protobuf encoding of a PartialObjectMetadataList
 * (k8s.io/apimachinery runtime.Unknown, meta/v1 generated.proto), which it
 * serves for every resource, custom ones included. A fence probes whole
 * collections (every BareMetalHost for a HardwareData LIST): as JSON, each
 * host's metadata with its managedFields is ~1.7 KB that kube-apiserver
 * encodes and this process parses into objects, only to read three strings;
 * here everything but those strings (managedFields, labels, annotations) is
 * skipped unread.
 *
 * The schema names only the fields read; protobufjs skips the others.
 */
import protobuf from 'protobufjs';

/** kube-apiserver's protobuf answers start with these four bytes ("k8s\0"), then a runtime.Unknown. */
const magic = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

export const protobufMediaType = 'application/vnd.kubernetes.protobuf';

const schema = protobuf.Root.fromJSON({
  nested: {
    TypeMeta: { fields: { apiVersion: { type: 'string', id: 1 }, kind: { type: 'string', id: 2 } } },
    Unknown: { fields: { typeMeta: { type: 'TypeMeta', id: 1 }, raw: { type: 'bytes', id: 2 } } },
    ListMeta: { fields: { resourceVersion: { type: 'string', id: 2 } } },
    ObjectMeta: { fields: { name: { type: 'string', id: 1 }, namespace: { type: 'string', id: 3 }, resourceVersion: { type: 'string', id: 6 } } },
    PartialObjectMetadata: { fields: { metadata: { type: 'ObjectMeta', id: 1 } } },
    PartialObjectMetadataList: { fields: { metadata: { type: 'ListMeta', id: 1 }, items: { rule: 'repeated', type: 'PartialObjectMetadata', id: 2 } } },
    Status: { fields: { status: { type: 'string', id: 2 }, message: { type: 'string', id: 3 }, reason: { type: 'string', id: 4 }, code: { type: 'int32', id: 6 } } },
  },
});
const unknownType = schema.lookupType('Unknown');
const listType = schema.lookupType('PartialObjectMetadataList');
const statusType = schema.lookupType('Status');

/** One object of the collection: where it is and its resourceVersion. */
export interface ObjectVersion {
  readonly namespace: string;
  readonly name: string;
  readonly resourceVersion: string;
}

/** The collection's resourceVersion and its objects'. */
export interface CollectionVersions {
  readonly resourceVersion: string;
  readonly items: readonly ObjectVersion[];
}

interface DecodedUnknown {
  readonly typeMeta?: { readonly apiVersion?: string; readonly kind?: string };
  readonly raw?: Uint8Array;
}

interface DecodedList {
  readonly metadata?: { readonly resourceVersion?: string };
  readonly items?: readonly { readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly resourceVersion?: string } }[];
}

/** A metav1.Status, as kube-apiserver encodes an error answer to a protobuf request. */
export interface DecodedStatus {
  readonly kind: 'Status';
  readonly status?: string;
  readonly message?: string;
  readonly reason?: string;
  readonly code?: number;
}

/** The envelope's kind and payload; throws on bytes that are not kube's protobuf. */
function open(bytes: Buffer): { readonly kind: string; readonly raw: Uint8Array } {
  if (bytes.length < magic.length || !bytes.subarray(0, magic.length).equals(magic)) throw new Error('not a Kubernetes protobuf answer');
  const unknown = unknownType.decode(bytes.subarray(magic.length)) as unknown as DecodedUnknown;
  return { kind: unknown.typeMeta?.kind ?? '', raw: unknown.raw ?? new Uint8Array() };
}

/** The versions a PartialObjectMetadataList in protobuf holds; throws on anything else. */
export function decodeCollectionVersions(bytes: Buffer): CollectionVersions {
  const { kind, raw } = open(bytes);
  if (kind !== 'PartialObjectMetadataList') throw new Error(`expected a PartialObjectMetadataList, got ${JSON.stringify(kind)}`);
  const list = listType.decode(raw) as unknown as DecodedList;
  return {
    resourceVersion: list.metadata?.resourceVersion ?? '',
    items: (list.items ?? []).map(({ metadata }) => ({
      namespace: metadata?.namespace ?? '',
      name: metadata?.name ?? '',
      resourceVersion: metadata?.resourceVersion ?? '',
    })),
  };
}

/** The Status of an error answer in protobuf; undefined when the bytes are not one. */
export function decodeStatus(bytes: Buffer): DecodedStatus | undefined {
  try {
    const { kind, raw } = open(bytes);
    if (kind !== 'Status') return undefined;
    return { kind: 'Status', ...(statusType.decode(raw) as unknown as Omit<DecodedStatus, 'kind'>) };
  } catch {
    return undefined;
  }
}
