// The benchmarks' workflow bundle entry: every gateway workflow, and the benchmarks' own floors.
export * from '../../workflows/index.ts';
export { benchmarkFloorWorkflow, benchmarkLeastApprovalWorkflow, benchmarkLocalAnswerWorkflow, benchmarkOperatorShapeWorkflow } from './floor.ts';
