import path from 'node:path';
import { defineConfig } from 'vitest/config';

// `npm run test:cluster`: the production shape started for real (server/cluster/cluster.ts). Kept
// out of `npm test`: it builds the Temporal server on first use and starts seven processes.
export default defineConfig({
  root: path.resolve(import.meta.dirname, '..', '..'),
  test: {
    name: 'cluster',
    include: ['test/cluster/**/*.test.ts'],
    environment: 'node',
    testTimeout: 240_000,
    hookTimeout: 1_200_000,
    fileParallelism: false,
  },
});
