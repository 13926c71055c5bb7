import { defineConfig } from 'vitest/config';

// Two projects: fast unit tests (no processes, no network beyond loopback
// servers they start themselves) and integration tests that run against the
// real control plane built from Go modules (see test/controlplane).
export default defineConfig({
  test: {
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
