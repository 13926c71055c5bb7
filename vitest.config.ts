import { defineConfig } from 'vitest/config';
import { IntegrationSequencer } from './test/integration/sequencer.js';

// Two projects: fast unit tests (no processes, no network beyond loopback
// servers they start themselves) and integration tests that run against the
// real control plane built from Go modules (see test/controlplane).
export default defineConfig({
  test: {
    // rbac-usage.test.ts last (test/integration/sequencer.ts).
    sequence: { sequencer: IntegrationSequencer },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          pool: 'threads',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          pool: 'forks',
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 600_000,
          globalSetup: ['test/integration/global-setup.ts'],
        },
      },
    ],
  },
});
