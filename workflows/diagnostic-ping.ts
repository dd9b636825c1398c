import { proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import { diagnosticPingStatusQuery, type DiagnosticPingInput, type DiagnosticPingResult } from './definitions.ts';

const { recordDiagnosticPing } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5 },
});

export async function diagnosticPingWorkflow(input: DiagnosticPingInput): Promise<DiagnosticPingResult> {
  let status: 'running' | 'done' = 'running';
  setHandler(diagnosticPingStatusQuery, () => status);
  const { workflowId } = workflowInfo();
  const rowId = await recordDiagnosticPing({ workflowId, message: input.message });
  status = 'done';
  return { rowId, workflowId };
}
