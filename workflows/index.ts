// The worker's workflow bundle entry point: every workflow type is exported from here.
export { diagnosticPingWorkflow } from './diagnostic-ping.ts';
export { webhookDeliveryWorkflow } from './webhook-delivery.ts';
export { callWorkflow } from './call.ts';
export { approvalNoticesWorkflow } from './approval-notices.ts';
