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
          // Three files at a time on two cores: much of an integration file's time is waiting
          // (timers, browsers, child processes starting), so a third overlaps it (433 → 334 s
          // measured); TEST_INTEGRATION_WORKERS=2 on a slower machine.
          maxWorkers: Number(process.env.TEST_INTEGRATION_WORKERS ?? 3),
        },
      },
    ],
  },
});
