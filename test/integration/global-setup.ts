// Builds (or finds cached) control-plane binaries once per test run, so test
// files never race on build.sh, and hands the directory to every worker.
import type { TestProject } from 'vitest/node';
import { BIN_DIR_ENV, buildControlPlaneBinaries } from '../controlplane/binaries.js';

declare module 'vitest' {
  export interface ProvidedContext {
    controlPlaneBinDir: string;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const binDir = process.env[BIN_DIR_ENV] ?? (await buildControlPlaneBinaries());
  // Workers inherit the environment; provide() also serves tests that use inject().
  process.env[BIN_DIR_ENV] = binDir;
  project.provide('controlPlaneBinDir', binDir);
}
