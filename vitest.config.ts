import { defineConfig } from 'vitest/config';

// Two projects: pure unit tests run anywhere; integration tests share one real PostgreSQL
// and one real Temporal dev server started by the global setup (test/support/global-setup.ts).
// Three files at a time on two cores: much of an integration file's time is waiting (timers,
// browsers, child processes starting), so a third overlaps it (433 → 334 s measured);
// TEST_INTEGRATION_WORKERS=2 on a slower machine. The unit project gets the same number so both
// share one pool and its files fill the gaps: with one worker of its own (the default on two
// cores) vitest ran it as a separate group after every integration file (~19 s at the end).
const workers = Number(process.env.TEST_INTEGRATION_WORKERS ?? 3);

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
          maxWorkers: workers,
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
          maxWorkers: workers,
          // Files share a worker process and its loaded modules instead of each importing the
          // whole server again (~10 % of the run was imports: 457 → 387 s). Nothing here mocks
          // modules; each file makes its own database, task queue and gateways.
          isolate: false,
        },
      },
    ],
  },
});
