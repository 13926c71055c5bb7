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
  /** kube-apiserver's answer on the reference CRD; undefined when not comparable. */
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
    name: 'kube-500-on-bad-input',
    why: 'Where kube-apiserver answers 500 for bad input (a non-numeric resourceVersion on GET; an apply that cannot build a typed patch), issue 15 asks for the 400 kube should have given.',
    applies: (_, ours, theirs) => theirs.status === 500 && ours.status === 400 && isStatus(ours),
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
 * Through the aggregator, a request kube-apiserver's own HTTP server cannot
 * parse never reaches this server: Go's net/http answers it with a raw
 * `400 Bad Request` that carries a body even for HEAD, which the client
 * cannot read. When the reference request fails the same way, that
 * transport answer is kube's, for both.
 */
function answeredByKubeAlone(c: FuzzCase, ours: Outcome, theirs: Outcome | undefined): boolean {
  return c.route === 'aggregator' && theirs !== undefined && 'error' in ours && 'error' in theirs && ours.error === theirs.error;
}

/** The known difference that explains this pair of answers, if any. */
export function knownDifference(c: FuzzCase, ours: RawResponse, theirs: RawResponse): KnownDifference | undefined {
  return KNOWN_DIFFERENCES.find((difference) => difference.applies(c, ours, theirs));
}

export function judge(observation: Observation): Violation[] {
  const { testCase: c, ours, theirs } = observation;
  if (!answered(ours)) {
    if (answeredByKubeAlone(c, ours, theirs)) return [];
    return [{ kind: 'no-answer', detail: 'error' in ours ? ours.error.replace(/\d+/g, 'N').slice(0, 80) : '' }];
  }
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
