/**
 * What every answer to a generated request must satisfy (issue 10 item 1):
 *   - the server answers (no crash, no hang past the client timeout);
 *   - no 5xx, except the retriable 503/504 kube-apiserver itself gives for
 *     the same input (e.g. a resourceVersion beyond the current revision);
 *   - a non-2xx answer is a metav1.Status (kind Status, apiVersion v1,
 *     status Failure, code = HTTP code, a reason), unless kube's answer for
 *     the same input on the reference CRD is not one either (HEAD, kube's
 *     plain-text 404 for paths outside the API);
 *   - the code, and the reason when both are Status, equal kube-apiserver's
 *     for the same input on the reference CRD, where the input maps;
 *   - a refused write leaves the target object unchanged.
 * Deliberate differences from kube are listed once, in KNOWN_DIFFERENCES.
 */
import type { RawResponse } from '../support/raw-http.js';
import type { FuzzCase } from './model.js';

export type Outcome = RawResponse | { readonly error: string };

export interface Observation {
  readonly testCase: FuzzCase;
  readonly ours: Outcome;
  /**
   * kube-apiserver's answer to the same request on the reference group. When
   * the case is not comparable (HardwareData has no reference) it only tells
   * whether kube answered ours itself, before proxying (answeredByKubeAlone).
   */
  readonly theirs?: Outcome;
  /** For a refused write: what changed on the target object (undefined: nothing). */
  readonly changed?: string;
}

export const VIOLATION_KINDS = ['no-answer', 'server-down', '5xx', 'not-status', 'code', 'reason', 'changed-on-refusal'] as const;
export type ViolationKind = (typeof VIOLATION_KINDS)[number];

export interface Violation {
  readonly kind: ViolationKind;
  /** Short and stable (codes, reasons), so that equal defects fall in one bucket. */
  readonly detail: string;
}

export interface KnownDifference {
  readonly name: string;
  readonly why: string;
  readonly applies: (testCase: FuzzCase, ours: RawResponse, theirs: RawResponse) => boolean;
}

const header = (c: FuzzCase, name: string): string => {
  const found = Object.entries(c.headers).find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];
  return Array.isArray(found) ? found.join(',') : String(found ?? '');
};

/** kube's 500s for bad input, and our answers to the same input, as their messages read. */
const READ_RESOURCE_VERSION_500 = /^resourceVersion: Invalid value: ".*": strconv\.ParseUint: parsing ".*": (invalid syntax|value out of range)$/s;
const OBJECT_RESOURCE_VERSION_500 = /^strconv\.ParseUint: parsing ".*": (invalid syntax|value out of range)$/s;
const MISSING_TYPE_500 = /^Internal error occurred: Object '(apiVersion|Kind)' is missing in 'object has no (apiVersion|kind) field ?'$/;
const TYPED_PATCH_FAILURE = 'failed to create typed patch object (';
const UNDECODABLE_METADATA = 'HostClaim in version "v1alpha1" cannot be handled as a HostClaim: json: cannot unmarshal ';
const OPTIMISTIC_LOCK = 'the object has been modified; please apply your changes to the latest version and try again';
const NOT_A_LIST = 'you requested PartialObjectMetadataList, but the requested object is not a list (*unstructured.Unstructured)';
const PATCH_INVALID = ' "" is invalid: patch: Invalid value: ';
const FOREIGN_CONTINUE_TOKEN = 'invalid continue token: continue key is not valid';

/** The header is sent on more than one line (an array of values, under any spelling of its name). */
const onSeveralLines = (c: FuzzCase, name: string): boolean =>
  Object.entries(c.headers).some(([key, value]) => key.toLowerCase() === name.toLowerCase() && Array.isArray(value) && value.length > 1);

const asksForUpgrade = (c: FuzzCase): boolean => header(c, 'Connection').toLowerCase().includes('upgrade');
const writeMethods = ['POST', 'PUT', 'PATCH', 'DELETE'];

export const KNOWN_DIFFERENCES: readonly KnownDifference[] = [
  {
    name: 'aggregator-upgrade',
    why: "kube-aggregator proxies a request whose Connection header names upgrade as an upgrade (handler_proxy.go, upgradeaware.go) and answers any backend answer below 400 that is not a 101 with its own plain-text 503 \"invalid upgrade response\"; kube serving a CRD has no aggregator in between. Every aggregated API server gets this 503 for a read.",
    applies: (c, ours, theirs) =>
      c.route === 'aggregator' && asksForUpgrade(c) && ours.status === 503 && ours.body.startsWith('invalid upgrade response: status code') && theirs.status < 400,
  },
  {
    name: 'upgrade-write-refused',
    why: 'A write asking for a connection upgrade is refused with 400 right before it would be committed (src/api/rest/commit-guard.ts): through the aggregator a write served normally would be committed and answered with the 503 above. kube serving a CRD writes.',
    applies: (c, ours, theirs) =>
      writeMethods.includes(c.method) && asksForUpgrade(c) && ours.status === 400 && reasonOf(ours) === 'BadRequest' && /connection upgrade is not supported/.test(messageOf(ours)) && theirs.status < 300,
  },
  {
    name: 'yaml-output',
    why: 'Objects and lists are served as YAML; Table and PartialObjectMetadata only as JSON. Where kube would answer one of them in YAML we answer 406 NotAcceptable.',
    applies: (c, ours, theirs) => ours.status === 406 && isStatus(ours) && /yaml/i.test(header(c, 'Accept')) && theirs.status !== 406,
  },
  {
    name: 'kube-500-on-read-resource-version',
    why: "A resourceVersion that is not a uint64 on a get or a watch: kube-apiserver passes the storage layer's InvalidError (APIObjectVersioner.ParseResourceVersion) through as a bare 500; issue 15 asks for the 400 it gives on a list, with the same wording (src/api/rest/query.ts).",
    applies: (_, ours, theirs) =>
      theirs.status === 500 && READ_RESOURCE_VERSION_500.test(messageOf(theirs)) && ours.status === 400 && isStatus(ours) && reasonOf(ours) === 'BadRequest' && messageOf(ours) === messageOf(theirs),
  },
  {
    name: 'kube-500-on-untypable-apply',
    why: "kube's field manager cannot build a typed patch from an apply configuration with a field the schema does not declare, a number float64 cannot hold, or a value of the wrong type, whatever fieldValidation says, and answers a bare 500 `failed to create typed patch object (…): …`; issue 15 asks for the 400 with that message (src/api/rest/patch.ts). Where metadata, which is typed even for a custom resource, also holds a value of the wrong type, ours may name that one, with the 400 kube gives a create or update of the same document: `HostClaim in version \"v1alpha1\" cannot be handled as a HostClaim: json: cannot unmarshal …`; kube names only one of the problems, and not always the same kind (a seeded run saw it name `.unknownTopLevel` for a document whose metadata.generation was a string).",
    applies: (c, ours, theirs) => {
      if (c.method !== 'PATCH' || theirs.status !== 500 || !messageOf(theirs).startsWith(TYPED_PATCH_FAILURE)) return false;
      if (ours.status !== 400 || !isStatus(ours) || reasonOf(ours) !== 'BadRequest') return false;
      // kube names one of the configuration's problems; ours may name another one, in metadata.
      return messageOf(ours).startsWith(TYPED_PATCH_FAILURE) || messageOf(ours).startsWith(UNDECODABLE_METADATA);
    },
  },
  {
    name: 'kube-500-on-object-resource-version',
    why: "A PUT or patch whose metadata.resourceVersion is not a uint64: kube's store compares it with the stored one through APIObjectVersioner.ObjectResourceVersion, which passes strconv's error out as a bare 500. A resourceVersion is opaque to clients, and one that is not the object's is a conflict: kube's 409 (OptimisticLockErrorMsg) when it parses but differs, and kube's 409 for any resourceVersion precondition of a DELETE that differs, numeric or not (Preconditions.Check compares strings).",
    applies: (c, ours, theirs) =>
      (c.method === 'PUT' || c.method === 'PATCH') &&
      theirs.status === 500 &&
      reasonOf(theirs) === '' &&
      OBJECT_RESOURCE_VERSION_500.test(messageOf(theirs)) &&
      ours.status === 409 &&
      isStatus(ours) &&
      reasonOf(ours) === 'Conflict' &&
      messageOf(ours).endsWith(OPTIMISTIC_LOCK),
  },
  {
    name: 'kube-500-on-object-as-list',
    why: "Asked for PartialObjectMetadataList, one object is kube's 406 (handlers/response.go asPartialObjectMetadataList: `you requested PartialObjectMetadataList, but the requested object is not a list`); for a custom resource the unstructured object passes its ListInterface check and then fails EachListItem, a bare 500 `content is not a list`. We answer the 406 with kube's message.",
    applies: (_, ours, theirs) =>
      theirs.status === 500 && messageOf(theirs) === 'content is not a list' && ours.status === 406 && isStatus(ours) && reasonOf(ours) === 'NotAcceptable' && messageOf(ours) === NOT_A_LIST,
  },
  {
    name: 'kube-500-on-patched-object-without-type',
    why: "A patch that removes apiVersion (or kind) leaves a document that is not a HostClaim: kube's patch handler answers 422 `patch: Invalid value` when the patched document does not decode (handlers/patch.go, applyPatchToCurrentObject); for a custom resource the unstructured decoder accepts it and the CRD's typer fails later, a 500 `Object 'apiVersion' is missing`. We answer the 422.",
    applies: (c, ours, theirs) =>
      c.method === 'PATCH' &&
      theirs.status === 500 &&
      reasonOf(theirs) === 'InternalError' &&
      MISSING_TYPE_500.test(messageOf(theirs)) &&
      ours.status === 422 &&
      isStatus(ours) &&
      reasonOf(ours) === 'Invalid' &&
      messageOf(ours).startsWith(PATCH_INVALID),
  },
  {
    name: 'ambiguous-front-proxy-identity',
    why: "A user name or uid sent directly on more than one X-Remote-User or X-Remote-Uid line is refused 401 (auth/front-proxy.ts): which line the proxy meant is unknown, and picking one is how a forged identity gets through. kube-apiserver's request-header authenticator reads the first line (http.Header.Get) and answers as that user.",
    applies: (c, ours) => c.route === 'direct' && ours.status === 401 && isStatus(ours) && reasonOf(ours) === 'Unauthorized' && (onSeveralLines(c, 'X-Remote-User') || onSeveralLines(c, 'X-Remote-Uid')),
  },
  {
    name: 'sealed-continue-token',
    why: 'Continue tokens are sealed (issue 12: opaque, tamper-evident, bound to the list they page): a token this server did not issue, such as one in kube\'s own format, is its 400 `invalid continue token: continue key is not valid`, where kube-apiserver reads its format and answers the list (200) or 410 Expired.',
    applies: (c, ours, theirs) =>
      /[?&]continue=/.test(c.path) && ours.status === 400 && isStatus(ours) && reasonOf(ours) === 'BadRequest' && messageOf(ours) === FOREIGN_CONTINUE_TOKEN && (theirs.status === 200 || theirs.status === 410),
  },
  {
    name: 'nesting-bound',
    why: "The server refuses JSON nested deeper than 1000 levels (400, `exceeded max depth of 1000`); kube's bound is 10000, where V8 cannot serialize or clone such objects on its default stack (docs/architecture.md, Limits on request work). Between the two kube accepts the body or refuses it otherwise.",
    applies: (_, ours, theirs) => ours.status === 400 && theirs.status !== 400 && messageOf(ours).endsWith('exceeded max depth of 1000'),
  },
  {
    name: 'patch-decoded-before-read',
    why: 'kube-apiserver 1.37 decodes a patch before it reads the object, so a patch that does not decode, of an object that does not exist, is its 400; this server reads first and answers 404, as 1.35 and 1.36 do (docs/operations.md, "Kubernetes versions").',
    applies: (c, ours, theirs) => c.method === 'PATCH' && ours.status === 404 && reasonOf(ours) === 'NotFound' && theirs.status === 400 && reasonOf(theirs) === 'BadRequest',
  },
  {
    name: 'tenant-status-writes',
    why: "Tenant roles on tenancy.metal3.io grant no status writes (deploy/: the status is the server's), while the reference CRD's test role grants hostclaims/status.",
    applies: (c, ours) => c.sender === 'tenant' && ours.status === 403 && isStatus(ours) && c.path.split('?')[0]?.includes('/status') === true,
  },
];

interface StatusBody {
  kind?: unknown;
  apiVersion?: unknown;
  status?: unknown;
  code?: unknown;
  reason?: unknown;
}

export function isStatus(response: RawResponse): boolean {
  const body = response.json as StatusBody | null | undefined;
  return typeof body === 'object' && body !== null && body.kind === 'Status' && body.apiVersion === 'v1' && body.status === 'Failure' && body.code === response.status;
}

function messageOf(response: RawResponse): string {
  const message = (response.json as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' ? message : '';
}

export function reasonOf(response: RawResponse): string {
  const reason = (response.json as StatusBody | null | undefined)?.reason;
  return typeof reason === 'string' ? reason : '';
}

const answered = (outcome: Outcome | undefined): outcome is RawResponse => outcome !== undefined && !('error' in outcome);
const succeeded = (response: RawResponse): boolean => response.status >= 200 && response.status < 300;

/**
 * Through the aggregator, kube-apiserver answers some requests itself before
 * proxying anything: its HTTP server refuses a request it cannot parse (an
 * invalid escape in the path) with Go's raw `400 Bad Request`, which carries
 * a body even for HEAD, so the client cannot read it; its mux answers a path
 * no handler serves (`//apis/…`) with a plain-text `404 page not found`.
 * When the reference request, which never reaches this server, gets the
 * same client error or the same answer that is not a Status, byte for
 * byte, that answer is kube's, for both.
 */
export function answeredByKubeAlone(c: FuzzCase, ours: Outcome, theirs: Outcome | undefined): boolean {
  if (c.route !== 'aggregator' || theirs === undefined) return false;
  if ('error' in ours || 'error' in theirs) return 'error' in ours && 'error' in theirs && ours.error === theirs.error;
  return !isStatus(ours) && !isStatus(theirs) && !succeeded(ours) && ours.status === theirs.status && ours.body === theirs.body;
}

/** The known difference that explains this pair of answers, if any. */
export function knownDifference(c: FuzzCase, ours: RawResponse, theirs: RawResponse): KnownDifference | undefined {
  return KNOWN_DIFFERENCES.find((difference) => difference.applies(c, ours, theirs));
}

export function judge(observation: Observation): Violation[] {
  const { testCase: c, ours, theirs } = observation;
  if (answeredByKubeAlone(c, ours, theirs)) return observation.changed === undefined ? [] : [{ kind: 'changed-on-refusal', detail: observation.changed }];
  if (!answered(ours)) return [{ kind: 'no-answer', detail: ours.error.replace(/\d+/g, 'N').slice(0, 80) }];
  const violations: Violation[] = [];
  const reference = c.comparable && answered(theirs) ? theirs : undefined;
  const known = reference === undefined ? undefined : knownDifference(c, ours, reference);
  // A known difference names ours exactly (code, and body where it is not a Status): nothing else to check.
  if (known !== undefined) return observation.changed === undefined ? [] : [{ kind: 'changed-on-refusal', detail: observation.changed }];
  if (ours.status >= 500 && !(reference !== undefined && reference.status === ours.status && (ours.status === 503 || ours.status === 504))) {
    violations.push({ kind: '5xx', detail: `${ours.status} ${reasonOf(ours)}`.trim() });
  }
  const statusExpected = c.method !== 'HEAD' && (reference === undefined || isStatus(reference) || succeeded(reference));
  if (!succeeded(ours) && statusExpected && !isStatus(ours)) {
    violations.push({ kind: 'not-status', detail: `${ours.status}` });
  } else if (!succeeded(ours) && statusExpected && reasonOf(ours) === '' && (reference === undefined || reasonOf(reference) !== '')) {
    violations.push({ kind: 'not-status', detail: `${ours.status} without reason` });
  }
  if (reference !== undefined) {
    if (ours.status !== reference.status) violations.push({ kind: 'code', detail: `${ours.status}≠${reference.status}` });
    else if (isStatus(ours) && isStatus(reference) && reasonOf(ours) !== reasonOf(reference)) {
      violations.push({ kind: 'reason', detail: `${ours.status} ${reasonOf(ours)}≠${reasonOf(reference)}` });
    }
  }
  if (observation.changed !== undefined) violations.push({ kind: 'changed-on-refusal', detail: observation.changed });
  return violations;
}
