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

export const KNOWN_DIFFERENCES: readonly KnownDifference[] = [
  {
    name: 'yaml-output',
    why: 'The server encodes JSON only (objects, Table, PartialObjectMetadata); kube-apiserver also serves YAML. Where kube would answer in YAML we answer 406 NotAcceptable, whose message lists only application/json.',
    applies: (c, ours, theirs) => ours.status === 406 && /yaml/i.test(header(c, 'Accept')) && theirs.status !== 406,
  },
  {
    name: 'kube-500-on-bad-input',
    why: 'Where kube-apiserver answers 500 for bad input (a non-numeric resourceVersion on GET; an apply that cannot build a typed patch), issue 15 asks for the 400 kube should have given.',
    applies: (_, ours, theirs) => theirs.status === 500 && ours.status === 400 && isStatus(ours),
  },
  {
    name: 'nesting-bound',
    why: 'A body nested deeper than 1000 levels is a 400 (src/api/rest/body.ts bodyLimits.maxDepth): V8 cannot serialize or clone values as deep as the 10000 levels kube-apiserver allows, so where kube decodes such a body we refuse it first.',
    applies: (_, ours, theirs) => ours.status === 400 && theirs.status !== 400 && /exceeded max depth of 1000\b/.test(ours.body),
  },
  {
    name: 'tenant-status-writes',
    why: "Tenant roles on tenancy.metal3.io grant no status writes (deploy/: the status is the server's), while the reference CRD's test role grants hostclaims/status.",
    applies: (c, ours) => c.sender === 'tenant' && ours.status === 403 && c.path.split('?')[0]?.includes('/status') === true,
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

export function reasonOf(response: RawResponse): string {
  const reason = (response.json as StatusBody | null | undefined)?.reason;
  return typeof reason === 'string' ? reason : '';
}

const answered = (outcome: Outcome | undefined): outcome is RawResponse => outcome !== undefined && !('error' in outcome);
const succeeded = (response: RawResponse): boolean => response.status >= 200 && response.status < 300;

/** The known difference that explains this pair of answers, if any. */
export function knownDifference(c: FuzzCase, ours: RawResponse, theirs: RawResponse): KnownDifference | undefined {
  return KNOWN_DIFFERENCES.find((difference) => difference.applies(c, ours, theirs));
}

export function judge(observation: Observation): Violation[] {
  const { testCase: c, ours, theirs } = observation;
  if (!answered(ours)) return [{ kind: 'no-answer', detail: 'error' in ours ? ours.error.replace(/\d+/g, 'N').slice(0, 80) : '' }];
  const violations: Violation[] = [];
  const reference = c.comparable && answered(theirs) ? theirs : undefined;
  const known = reference === undefined ? undefined : knownDifference(c, ours, reference);
  if (ours.status >= 500 && !(reference !== undefined && reference.status === ours.status && (ours.status === 503 || ours.status === 504))) {
    violations.push({ kind: '5xx', detail: `${ours.status} ${reasonOf(ours)}`.trim() });
  }
  const statusExpected = c.method !== 'HEAD' && (reference === undefined || isStatus(reference) || succeeded(reference));
  if (!succeeded(ours) && statusExpected && !isStatus(ours)) {
    violations.push({ kind: 'not-status', detail: `${ours.status}` });
  } else if (!succeeded(ours) && statusExpected && reasonOf(ours) === '' && (reference === undefined || reasonOf(reference) !== '')) {
    violations.push({ kind: 'not-status', detail: `${ours.status} without reason` });
  }
  if (reference !== undefined && known === undefined) {
    if (ours.status !== reference.status) violations.push({ kind: 'code', detail: `${ours.status}≠${reference.status}` });
    else if (isStatus(ours) && isStatus(reference) && reasonOf(ours) !== reasonOf(reference)) {
      violations.push({ kind: 'reason', detail: `${ours.status} ${reasonOf(ours)}≠${reasonOf(reference)}` });
    }
  }
  if (observation.changed !== undefined) violations.push({ kind: 'changed-on-refusal', detail: observation.changed });
  return violations;
}
