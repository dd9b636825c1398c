// A workflow whose first task never ends (a loop in workflow code): what the worker's thread watch
// (server/temporal/workflow-threads.ts) must catch. Used by test/integration/workflow-threads.test.ts only.
export async function stuckWorkflow(): Promise<void> {
  for (;;) {
    // spins for good
  }
}
