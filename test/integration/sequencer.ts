// The order of integration test files: vitest's own (failed first, then
// slowest), except rbac-usage.test.ts, which reads what every other file's
// control planes audited and so runs last. The files of the run are written
// to the audit directory, so that test knows whether it saw the whole suite.
import fs from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { AUDIT_DIR_ENV, RUN_FILES } from '../controlplane/audit.js';

export const LAST_FILE = 'rbac-usage.test.ts';

export class IntegrationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const last = (file: TestSpecification): boolean => path.basename(file.moduleId) === LAST_FILE;
    const auditDir = process.env[AUDIT_DIR_ENV];
    if (auditDir !== undefined) {
      const integration = sorted.filter((file) => file.project.name === 'integration').map((file) => file.moduleId);
      fs.writeFileSync(path.join(auditDir, RUN_FILES), JSON.stringify(integration));
    }
    return [...sorted.filter((file) => !last(file)), ...sorted.filter(last)];
  }
}
