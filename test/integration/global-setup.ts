// Builds (or finds cached) control-plane binaries once per test run, so test
// files never race on build.sh, and hands the directory to every worker.
// Also gives the run one audit directory (test/controlplane/audit.ts): every
// control plane of the run audits hostclaim-apiserver's ServiceAccount into
// it, for rbac-usage.test.ts.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { AUDIT_DIR_ENV } from '../controlplane/audit.js';
import { BIN_DIR_ENV, buildControlPlaneBinaries } from '../controlplane/binaries.js';

declare module 'vitest' {
  export interface ProvidedContext {
    controlPlaneBinDir: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const binDir = process.env[BIN_DIR_ENV] ?? (await buildControlPlaneBinaries());
  // Workers inherit the environment; provide() also serves tests that use inject().
  process.env[BIN_DIR_ENV] = binDir;
  project.provide('controlPlaneBinDir', binDir);
  const auditDir = await fs.mkdtemp(path.join(os.tmpdir(), 'hostclaim-audit-'));
  process.env[AUDIT_DIR_ENV] = auditDir;
  return async () => {
    await fs.rm(auditDir, { recursive: true, force: true });
  };
}
