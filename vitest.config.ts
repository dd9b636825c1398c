import { defineConfig } from 'vitest/config';

// Two projects: pure unit tests run anywhere; integration tests share one real PostgreSQL
// and one real Temporal dev server started by the global setup (test/support/global-setup.ts).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Two cores: keep integration files from starving the shared servers.
          maxWorkers: 2,
        },
      },
    ],
  },
});
