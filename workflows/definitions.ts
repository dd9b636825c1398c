// Everything shared between workflow code and the rest of the gateway: task queue, message
// definitions and their types. The API, CLI and dashboard import this file, never workflow code.
import { defineQuery } from '@temporalio/workflow';

export const TASK_QUEUE = 'gateway-actions';

/** Wiring proof (issue 2): a workflow whose one activity writes a row to PostgreSQL. */
export interface DiagnosticPingInput {
  message: string;
}
export interface DiagnosticPingResult {
  rowId: string;
  workflowId: string;
}
export const diagnosticPingStatusQuery = defineQuery<'running' | 'done'>('diagnosticPingStatus');

export const diagnosticPingWorkflowId = (id: string) => `diagnostic-ping-${id}`;
