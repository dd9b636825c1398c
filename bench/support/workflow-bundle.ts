// The gateway's workflows and the benchmarks' own (bench/workflows/), bundled once per benchmark run
// into a file: a benchmark starts the gateway with TEMPORAL_WORKFLOW_BUNDLE pointing at it, and its
// own workers load the same code. The product's bundle carries no benchmark workflow.
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_PRELOAD_MODULES } from '../../server/temporal/bundle-options.ts';

const ENTRY = path.resolve(import.meta.dirname, '..', 'workflows', 'index.ts');
const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error };

let built: Promise<{ code: string; path: string }> | undefined;

/** The bundle's code and the file it was written to (built on first use). */
export function benchWorkflowBundle(): Promise<{ code: string; path: string }> {
  built ??= (async () => {
    const { code } = await bundleWorkflowCode({ workflowsPath: ENTRY, preloadModules: WORKFLOW_PRELOAD_MODULES, logger: quiet });
    const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'gateway-bench-bundle-')), 'workflows.js');
    await writeFile(file, code);
    return { code, path: file };
  })();
  return built;
}
