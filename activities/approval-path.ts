// The path a call that needed an approval takes to its upstream, as metrics label it: sent in the
// allow's own activity (the agent asked for auto-call), or resumed by its agent with the approval id.
import type { CallPath } from '../server/metrics/metrics.ts';
import type { CallSpec } from '../workflows/definitions.ts';

export const approvalPath = (spec: Pick<CallSpec, 'autoCallOnApprove'>): CallPath => (spec.autoCallOnApprove ? 'approved' : 'resumed');
