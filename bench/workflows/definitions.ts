// What the benchmarks' own workflows (bench/workflows/floor.ts) and their workers share. None of
// this is in the gateway's bundle: benchmarks bundle these beside the gateway's workflows
// (bench/support/workflow-bundle.ts).
import { defineUpdate } from '@temporalio/workflow';

/** The benchmark's floor workflow (bench/workflows/floor.ts). */
export const benchmarkFloorUpdate = defineUpdate<string>('benchmarkFloor');

/** The decision of bench/least-call.ts's least approval workflow. */
export const benchmarkDecideUpdate = defineUpdate<string>('benchmarkDecide');

/** The benchmark workflows' activities (bench/eager-start.ts, bench/support/least-call-gateway.ts). */
export interface BenchmarkActivities {
  /** The design floor's one local activity: hands the answer to the caller in-process. */
  benchmarkAnswer(id: string): Promise<void>;
  /** The least approval: the call parked as pending, the caller told in-process. */
  benchmarkRaise?(id: string): Promise<void>;
  /** The least allowed call: the decision with the send mark, the send, the final state. */
  benchmarkSendAllowed?(id: string): Promise<void>;
}
