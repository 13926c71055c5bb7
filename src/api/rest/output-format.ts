/**
 * Which representation a resource response gets, negotiated from the Accept
 * header as kube-apiserver negotiates it for a custom resource: plain JSON or
 * YAML, `meta.k8s.io` Table (kubectl get) or PartialObjectMetadata(List).
 * Facts come from k8s.io/apiserver@v0.36.3 `pkg/endpoints/handlers`
 * (response.go, rest.go, negotiation/).
 *
 * Deliberate differences from kube for a CRD endpoint:
 * - Objects and lists are served as JSON or YAML; Table and
 *   PartialObjectMetadata(List) only as JSON: a YAML range asking for them,
 *   protobuf and CBOR ranges are skipped during negotiation (kube would
 *   serve them, and protobuf for PartialObjectMetadata(List)). Errors and a
 *   delete's Status are always JSON (kube encodes them as negotiated).
 * - `as=PartialObjectMetadataList` on a single-object request gets the 406
 *   kube returns for built-in types; for CRDs kube answers 500 "content is not
 *   a list" because an unstructured object passes its list check.
 * - The 406 for a wrong PartialObjectMetadata kind is raised at negotiation,
 *   kube raises it after reading storage; callers that want kube's ordering
 *   (404/403 first) negotiate after the read.
 */
import { negotiate, type MediaRange, type Offer } from '../negotiation.js';
import { notAcceptable } from '../status.js';
import { META_GROUP, type MetaVersion } from './partial-object-metadata.js';

/** What the request reads: one object (get, and write responses), a collection, or a watch stream. */
export type OutputTarget = 'object' | 'list' | 'watch';

/**
 * The negotiated representation. `partialObjectMetadata` means "metadata
 * only" in the shape that fits the target: PartialObjectMetadataList for a
 * list, PartialObjectMetadata for an object or each watch event.
 */
export type OutputFormat =
  | { readonly kind: 'json' }
  | { readonly kind: 'table'; readonly version: MetaVersion }
  | { readonly kind: 'partialObjectMetadata'; readonly version: MetaVersion };

/** What an object or list response may be: a representation above, or the object itself as YAML (kube's YAML serializer). */
export type ResponseFormat = OutputFormat | { readonly kind: 'yaml' };

/** The media types kube-apiserver lists for a custom resource (its 406 and 415 messages). */
export const ACCEPTED_MEDIA_TYPES: readonly string[] = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];

export type Conversion = ResponseFormat | { readonly kind: 'partialObjectMetadataList'; readonly version: MetaVersion };

/**
 * What one Accept range asks for, or undefined when kube's CRD endpoint
 * would skip it (or this server does not serve it: YAML with a
 * conversion): a media type other than JSON or YAML (or a wildcard covering
 * JSON, the first of kube's serializers),
 * an unknown `stream=` or `sv=`, or any `as`/`g`/`v` that is not Table or
 * PartialObjectMetadata(List) in meta.k8s.io/v1 or v1beta1 (kube's
 * `AllowsMediaTypeTransform`; `g` or `v` alone also request a conversion).
 */
function conversionOf(range: MediaRange): Conversion | undefined {
  const json =
    (range.type === 'application' && (range.subtype === 'json' || range.subtype === '*')) ||
    (range.type === '*' && range.subtype === '*');
  const yaml = range.type === 'application' && range.subtype === 'yaml';
  if (!json && !yaml) return undefined;
  const { as, g, v, stream, sv } = range.params;
  if (stream !== undefined && stream !== '' && stream !== 'watch') return undefined;
  // AllowsServerVersion compares with the scope's meta group version (meta.k8s.io/v1).
  if (sv !== undefined && sv !== '' && sv !== 'v1') return undefined;
  if (as === undefined && g === undefined && v === undefined) return { kind: yaml ? 'yaml' : 'json' };
  if (yaml || g !== META_GROUP || (v !== 'v1' && v !== 'v1beta1')) return undefined;
  if (as === 'Table') return { kind: 'table', version: v };
  if (as === 'PartialObjectMetadata') return { kind: 'partialObjectMetadata', version: v };
  if (as === 'PartialObjectMetadataList') return { kind: 'partialObjectMetadataList', version: v };
  return undefined;
}

function sameConversion(a: Conversion | undefined, b: Conversion): boolean {
  if (a === undefined || a.kind !== b.kind) return false;
  return a.kind === 'json' || a.kind === 'yaml' || b.kind === 'json' || b.kind === 'yaml' || a.version === b.version;
}

const STREAM_CONVERSIONS: readonly Conversion[] = [
  { kind: 'json' },
  ...(['v1', 'v1beta1'] as const).flatMap((version): Conversion[] => [
    { kind: 'table', version },
    { kind: 'partialObjectMetadata', version },
    { kind: 'partialObjectMetadataList', version },
  ]),
];

const offersOf = (conversions: readonly Conversion[]): readonly Offer<Conversion>[] =>
  conversions.map((value) => ({ value, matches: (range) => sameConversion(conversionOf(range), value) }));

/** kube's YAML serializer has no streaming form: a watch skips YAML ranges. */
const STREAM_OFFERS = offersOf(STREAM_CONVERSIONS);
const OFFERS = offersOf([...STREAM_CONVERSIONS, { kind: 'yaml' }]);

/**
 * Picks the representation for a resource response from the Accept header,
 * as kube-apiserver does for a custom resource: the first acceptable range in
 * preference order wins, ranges we cannot serve are skipped, and nothing
 * acceptable is a 406. A PartialObjectMetadata kind that does not fit the
 * target is a 406 rather than a fall-back to a later range (kube negotiates
 * first and fails while converting). On a watch, PartialObjectMetadataList
 * yields plain JSON: kube's per-event conversion fails and it sends each
 * object unconverted.
 *
 * Kube's rules do not depend on the resource served: an `as=` naming the
 * resource's own kind is skipped like any other unknown conversion.
 */
export function negotiateOutput(accept: string | undefined, target: 'watch'): OutputFormat;
export function negotiateOutput(accept: string | undefined, target: OutputTarget): ResponseFormat;
export function negotiateOutput(accept: string | undefined, target: OutputTarget): ResponseFormat {
  if (target === 'watch') return fitTarget(negotiate(accept, STREAM_OFFERS, ACCEPTED_MEDIA_TYPES), target);
  return fitTarget(negotiateConversion(accept), target);
}

/**
 * The negotiation alone (kube's NegotiateOutputMediaType, the 406 a write
 * gives before anything else): whether the conversion fits the target is
 * only known when the response is encoded.
 */
export function negotiateConversion(accept: string | undefined): Conversion {
  return negotiate(accept, OFFERS, ACCEPTED_MEDIA_TYPES);
}

/** The conversion applied to what the request reads; kube fails here, while encoding the response. */
export function fitTarget(chosen: Conversion, target: OutputTarget): ResponseFormat {
  switch (chosen.kind) {
    case 'json':
    case 'yaml':
    case 'table':
      return chosen;
    case 'partialObjectMetadata':
      if (target === 'list') {
        throw notAcceptable(
          'you requested PartialObjectMetadata, but the requested object is a list (*unstructured.UnstructuredList)',
        );
      }
      return chosen;
    case 'partialObjectMetadataList':
      if (target === 'object') {
        throw notAcceptable(
          'you requested PartialObjectMetadataList, but the requested object is not a list (*unstructured.Unstructured)',
        );
      }
      if (target === 'watch') return { kind: 'json' };
      return { kind: 'partialObjectMetadata', version: chosen.version };
  }
}
