// What every bundle of the workflow code is built with: the gateway's (bundle-child.ts), the
// tests' (test/support/global-setup.ts) and the benchmarks' (bench/support/workflow-bundle.ts).
// Light on imports: the bundling child loads it beside the bundler alone.
import path from 'node:path';

/**
 * Modules the worker evaluates once, in its reusable V8 context, and shares (frozen) between
 * workflows; every other module of the bundle is evaluated afresh for each workflow run. Only
 * stateless, deterministic modules whose set-up costs: the decision proofs' Ed25519
 * (core/decisions/proof.ts) computes its curve's constants and a base-point table when loaded,
 * which took more of the worker's CPU per covered call than the workflow's own code, though a
 * covered call verifies nothing. Our module rather than the library itself: the library declares
 * itself free of side effects, so the bundler drops a bare require of it.
 */
export const WORKFLOW_PRELOAD_MODULES = [path.resolve(import.meta.dirname, '..', '..', 'core', 'decisions', 'proof.ts')];
