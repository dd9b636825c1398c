// The gateway's workflow bundle, as its worker loads it: the bundle evaluated in a V8 context of
// its own with a module cache that records every module evaluated, then the worker's preload
// (once per worker), then one workflow's import of the workflow code (once per workflow run: the
// SDK gives each run a module cache of its own and shares only what was loaded before).
import vm from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { workflowBundle } from '../../../server/temporal/worker.ts';

let code: string;
/** Modules evaluated once per worker (the bundle's own start-up and the preload). */
let perWorker: string[];
/** Modules evaluated again for every workflow run. */
let perWorkflow: string[];

beforeAll(async () => {
  ({ code } = await workflowBundle());
  let evaluated: string[] = [];
  const moduleCache: Record<string, unknown> = {};
  const recording = new Proxy(moduleCache, {
    set(target, id: string, module) {
      evaluated.push(id);
      target[id] = module;
      return true;
    },
  });
  const context = vm.createContext({ __webpack_module_cache__: recording, TextEncoder, TextDecoder });
  vm.runInContext(code, context);
  vm.runInContext('__TEMPORAL__.preloadModules()', context);
  perWorker = evaluated;
  evaluated = [];
  vm.runInContext('__TEMPORAL__.importWorkflows()', context);
  perWorkflow = evaluated;
}, 180_000);

describe('the workflow bundle', () => {
  it('evaluates the decision proofs and their Ed25519 once per worker, not once per workflow', () => {
    expect(perWorker).toEqual(expect.arrayContaining(['./core/decisions/proof.ts', './node_modules/@noble/curves/ed25519.js', './node_modules/@noble/hashes/sha2.js']));
    expect(perWorkflow).toContain('./workflows/call.ts');
    expect(perWorkflow.filter((id) => id.includes('@noble/') || id.includes('decisions/proof'))).toEqual([]);
  });

  it('carries no CEL engine: the workflow needs the chain ancestry, not the rule conditions', () => {
    expect(perWorkflow).toContain('./core/permissions/ancestry.ts');
    expect(code).not.toContain('@marcbachmann/cel-js');
    expect(code).not.toContain('./core/permissions/conditions.ts');
  });
});
