// What hostclaim-apiserver's ServiceAccount does to kube-apiserver, from
// kube-apiserver's audit log, so test/integration/rbac-usage.test.ts can map
// every RBAC rule deploy/ grants to requests the suite made under it.
//
// Only when $HOSTCLAIM_AUDIT_DIR is set (the integration suite's global
// setup sets it): kube-apiserver then audits that one user at Metadata level
// (everything else at None, so other requests cost one policy match), and
// when the control plane stops, the log is reduced to the distinct requests
// and written to $HOSTCLAIM_AUDIT_DIR/<control plane>.json.
import fs from 'node:fs/promises';
import path from 'node:path';

export const AUDIT_DIR_ENV = 'HOSTCLAIM_AUDIT_DIR';
export const SERVER_SERVICE_ACCOUNT = 'system:serviceaccount:hostclaim-system:hostclaim-apiserver';

/** One kind of request the ServiceAccount made, and what RBAC answered. */
export interface AuditedRequest {
  verb: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /** `authorization.k8s.io/decision`: allow or forbid. */
  decision: string;
  /** `authorization.k8s.io/reason`: which binding allowed it. */
  reason: string;
}

interface AuditEvent {
  verb: string;
  user: { username: string };
  objectRef?: { apiGroup?: string; resource?: string; subresource?: string; namespace?: string; name?: string };
  annotations?: Record<string, string>;
}

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    users: ["${SERVER_SERVICE_ACCOUNT}"]
  - level: None
`;

export function auditDir(): string | undefined {
  return process.env[AUDIT_DIR_ENV];
}

/** kube-apiserver flags auditing the ServiceAccount into `logFile`; writes the policy next to it. */
export async function auditFlags(logFile: string): Promise<string[]> {
  const policyFile = policyFileOf(logFile);
  await fs.writeFile(policyFile, POLICY);
  return [`--audit-policy-file=${policyFile}`, `--audit-log-path=${logFile}`, '--audit-log-format=json', '--audit-log-maxbackup=0'];
}

/**
 * Reduces the audit log to its distinct requests, written as
 * `<dir>/<name>.json`, and removes the log and its policy (the control
 * plane's log directory keeps only the components' logs).
 */
export async function collectAuditedRequests(logFile: string, dir: string, name: string): Promise<void> {
  let text: string;
  try {
    text = await fs.readFile(logFile, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  await Promise.all([fs.rm(logFile), fs.rm(policyFileOf(logFile), { force: true })]);
  const requests = new Map<string, AuditedRequest>();
  for (const request of parseAuditLog(text)) requests.set(JSON.stringify(request), request);
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, `${name}.json`), JSON.stringify([...requests.values()]));
}

/** The ServiceAccount's requests in an audit log's text, in order. */
function parseAuditLog(text: string): AuditedRequest[] {
  const requests: AuditedRequest[] = [];
  for (const line of text.split('\n').filter((line) => line !== '')) {
    let event: AuditEvent;
    try {
      event = JSON.parse(line) as AuditEvent;
    } catch {
      // Only a kube-apiserver killed in the middle of writing an event leaves a truncated line:
      // that one event is lost.
      continue;
    }
    if (event.user.username !== SERVER_SERVICE_ACCOUNT) continue;
    requests.push({
      verb: event.verb,
      apiGroup: event.objectRef?.apiGroup ?? '',
      resource: event.objectRef?.resource ?? '',
      subresource: event.objectRef?.subresource ?? '',
      namespace: event.objectRef?.namespace ?? '',
      name: event.objectRef?.name ?? '',
      decision: event.annotations?.['authorization.k8s.io/decision'] ?? '',
      reason: event.annotations?.['authorization.k8s.io/reason'] ?? '',
    });
  }
  return requests;
}

/** Where a control plane logging to `logDir` writes its audit log while it runs. */
export function auditLogFile(logDir: string): string {
  return path.join(logDir, 'kube-apiserver-audit.log');
}

/** The ServiceAccount's requests a running control plane has audited so far, in order. */
export async function auditedSoFar(logDir: string): Promise<AuditedRequest[]> {
  return parseAuditLog(await fs.readFile(auditLogFile(logDir), 'utf8'));
}

function policyFileOf(logFile: string): string {
  return `${logFile}.policy.yaml`;
}

/** Every request recorded in `dir` by the control planes of this run. */
export async function readAuditedRequests(dir: string): Promise<AuditedRequest[]> {
  const files = (await fs.readdir(dir)).filter((file) => file.endsWith('.json') && file !== RUN_FILES);
  const lists = await Promise.all(files.map(async (file) => JSON.parse(await fs.readFile(path.join(dir, file), 'utf8')) as AuditedRequest[]));
  return lists.flat();
}

/** Written by the integration suite's sequencer: the test files of this run. */
export const RUN_FILES = 'run-files.json';
