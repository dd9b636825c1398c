// The worker's workflow bundle entry point: every workflow type is exported from here.
export { diagnosticPingWorkflow } from './diagnostic-ping.ts';
