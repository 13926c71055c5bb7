/** Pieces shared by the generators: routes, target paths, valid bodies, header-safe text. */
import fc from 'fast-check';
import type { Route } from '../model.js';
import { object, toJson, value, type Doc } from '../values.js';

export const GROUP_VERSION = 'tenancy.metal3.io/v1alpha1';
export const COLLECTION = `/apis/${GROUP_VERSION}/namespaces/{ns}/hostclaims`;
export const OBJECT = `${COLLECTION}/{obj}`;

export const route: fc.Arbitrary<Route> = fc.oneof({ weight: 2, arbitrary: fc.constant('aggregator' as const) }, { weight: 1, arbitrary: fc.constant('direct' as const) });

/** Mostly the worker's own namespace; sometimes the other tenant's or one no tenant may use. */
export const namespace = fc.oneof({ weight: 8, arbitrary: fc.constant('{ns}') }, { weight: 1, arbitrary: fc.constantFrom('{other}', 'default', 'hostclaim-system') });

/** A valid HostClaim document named `name`, labelled as the worker's. */
export function claimDoc(name: string): Doc {
  return object([
    ['apiVersion', value(GROUP_VERSION)],
    ['kind', value('HostClaim')],
    ['metadata', object([['name', value(name)], ['labels', object([['fuzz-worker', value('{worker}')]])]])],
    ['spec', object([['poweredOn', value(false)]])],
  ]);
}

export const validCreate = (): string => toJson(claimDoc('{new}'));
export const validUpdate = (): string => toJson(claimDoc('{obj}'));
export const harmlessMergePatch = '{"metadata":{"annotations":{"fuzz":"touched"}}}';

/** Paths inside a claim where hostile values go (strings: object keys; the last may be new). */
export const FIELD_PATHS: readonly (readonly string[])[] = [
  [],
  ['apiVersion'],
  ['kind'],
  ['metadata'],
  ['metadata', 'name'],
  ['metadata', 'generateName'],
  ['metadata', 'namespace'],
  ['metadata', 'labels'],
  ['metadata', 'labels', 'a'],
  ['metadata', 'annotations'],
  ['metadata', 'annotations', 'a'],
  ['metadata', 'finalizers'],
  ['metadata', 'ownerReferences'],
  ['metadata', 'managedFields'],
  ['metadata', 'resourceVersion'],
  ['metadata', 'uid'],
  ['metadata', 'generation'],
  ['metadata', 'creationTimestamp'],
  ['metadata', 'deletionTimestamp'],
  ['metadata', 'deletionGracePeriodSeconds'],
  ['metadata', 'selfLink'],
  ['spec'],
  ['spec', 'poweredOn'],
  ['spec', 'image'],
  ['spec', 'image', 'url'],
  ['spec', 'userData'],
  ['spec', 'userData', 'name'],
  ['spec', 'hostSelector'],
  ['spec', 'hostSelector', 'matchLabels'],
  ['spec', 'hostSelector', 'matchExpressions'],
  ['spec', 'consumerRef'],
  ['spec', 'failureDomain'],
  ['spec', 'nodeReuse'],
  ['spec', 'unknownField'],
  ['status'],
  ['status', 'phase'],
  ['unknownTopLevel'],
];

export const fieldPath = fc.constantFrom(...FIELD_PATHS);

/**
 * Text Node may send in a header value (it refuses control characters and
 * code points above U+00FF before anything is sent).
 */
export function headerSafe(text: string): string {
  return text.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
}

export const headerText = fc.oneof(
  fc.string({ maxLength: 20 }).map(headerSafe),
  fc.constantFrom('', ' ', 'tenant-b', 'system:admin', 'system:masters', 'system:anonymous', 'system:serviceaccount:hostclaim-system:hostclaim-apiserver', 'é', 'a,b', '%2F', '*'),
);

/** Invalid UTF-8 sequences: stray continuation, overlong, surrogate half, beyond U+10FFFF, truncated. */
export const invalidUtf8 = fc.constantFrom([0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0xff, 0xfe], [0x00]);
