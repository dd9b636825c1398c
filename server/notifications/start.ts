// Starting an approval's notices for one occasion (raised, bubbled, routed past the user, a
// reminder, the outcome): one workflow per occasion, its id making a second start a no-op. Used by
// the call activities and by the people's routing in the API (server/teams/routing.ts).
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import type { Logger } from '../logger.ts';
import { orgHasChannels } from './store.ts';
import { approvalNoticesWorkflowId, type ApprovalNoticesInput } from '../../workflows/notice-definitions.ts';

export interface NoticeStarterDeps {
  logger: Pick<Logger, 'warn'>;
  temporal: Client;
  taskQueue: string;
  retry: ApprovalNoticesInput['retry'];
}

/** Starts the notices of one occasion; never throws (a notice must not fail the approval). */
export function noticeStarter(deps: NoticeStarterDeps) {
  return async (approvalId: string, purpose: string, occasion: string = purpose): Promise<void> => {
    try {
      await deps.temporal.workflow.start('approvalNoticesWorkflow', {
        workflowId: approvalNoticesWorkflowId(approvalId, occasion),
        taskQueue: deps.taskQueue,
        args: [{ approvalId, purpose, retry: deps.retry } satisfies ApprovalNoticesInput],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return;
      deps.logger.warn({ approval_id: approvalId, purpose, err: (err as Error).message }, 'could not start the approval notices');
    }
  };
}

/**
 * An approval routed past its user (issue 29) announced to its new resolvers, when the org
 * announces approvals anywhere: the routing rules are evaluated again for `bubbled`.
 */
export function routedAnnouncer(deps: NoticeStarterDeps & { pool: DatabasePool }) {
  const start = noticeStarter(deps);
  return async (orgId: string, approvalId: string, occasion: string): Promise<void> => {
    try {
      if (await orgHasChannels(deps.pool, orgId)) await start(approvalId, 'bubbled', occasion);
    } catch (err) {
      deps.logger.warn({ approval_id: approvalId, err: (err as Error).message }, 'could not announce the routed approval');
    }
  };
}
