// One task queue, one database. Two gateways with different databases on one Temporal namespace
// and queue would each run the other's workflows against the wrong data (a call's notices sent
// by a gateway that has never heard of its approval). Each database carries an instance id
// (table gateway_instance); at start a gateway records it as the queue's owner in the
// namespace's key-value data, and refuses a queue another database owns.
import { isGrpcServiceError, type ConnectionLike } from '@temporalio/client';
import type { Logger } from '../logger.ts';
import { StartupError } from '../embedded/startup-error.ts';

const GRPC_PERMISSION_DENIED = 7;
const GRPC_UNIMPLEMENTED = 12;
const GRPC_UNAUTHENTICATED = 16;

/** The namespace data key naming the owner of `taskQueue`. */
export function ownerKey(taskQueue: string): string {
  return `agent-gateway.task-queue.${taskQueue}`;
}

export type Claim = 'ours' | 'free' | 'taken';

/** What the recorded owner means for this gateway (pure). */
export function claimOf(recorded: string | undefined, instanceId: string): Claim {
  if (!recorded) return 'free';
  return recorded === instanceId ? 'ours' : 'taken';
}

export class TaskQueueTakenError extends StartupError {
  constructor(opts: { taskQueue: string; namespace: string; address: string }) {
    super(
      `TEMPORAL_TASK_QUEUE "${opts.taskQueue}" in Temporal namespace "${opts.namespace}" at ${opts.address} belongs to a gateway on another database: ` +
        'set TEMPORAL_TASK_QUEUE to a queue of its own, or TEMPORAL_ADDRESS to this gateway\'s own Temporal',
    );
    this.name = 'TaskQueueTakenError';
  }
}

async function recordedOwner(connection: ConnectionLike, namespace: string, taskQueue: string): Promise<string | undefined> {
  const res = await connection.workflowService.describeNamespace({ namespace });
  return res.namespaceInfo?.data?.[ownerKey(taskQueue)] ?? undefined;
}

/** Claims the task queue for this database, or throws TaskQueueTakenError when another one has it. */
export async function claimTaskQueue(opts: {
  connection: ConnectionLike;
  namespace: string;
  taskQueue: string;
  address: string;
  instanceId: string;
  logger: Logger;
}): Promise<void> {
  const { connection, namespace, taskQueue, instanceId, logger } = opts;
  const taken = () => new TaskQueueTakenError({ taskQueue, namespace, address: opts.address });
  for (let attempt = 1; ; attempt++) {
    const claim = claimOf(await recordedOwner(connection, namespace, taskQueue), instanceId);
    if (claim === 'ours') return;
    if (claim === 'taken') throw taken();
    try {
      // Namespace data is merged: other keys (other queues' owners) are kept.
      await connection.workflowService.updateNamespace({ namespace, updateInfo: { data: { [ownerKey(taskQueue)]: instanceId } } });
    } catch (err) {
      const code = isGrpcServiceError(err) ? err.code : undefined;
      if (code === GRPC_PERMISSION_DENIED || code === GRPC_UNAUTHENTICATED || code === GRPC_UNIMPLEMENTED) {
        // A Temporal that lets the gateway run workflows but not edit its namespace: nothing to
        // record the owner in. Say so; a queue of its own per gateway is then the operator's care.
        logger.warn({ namespace, taskQueue, err: (err as Error).message }, "could not record this database as the task queue's owner in the Temporal namespace");
        return;
      }
      // Namespace updates are conditional on the namespace's version: another gateway's claim
      // at the same moment fails this one. Read again: it may be ours to take still, or theirs.
      if (attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 100 * attempt));
      continue;
    }
    // Without compare-and-set on the key, two gateways claiming in the same instant could both
    // pass (the later write wins). The case this guards against, one started beside another
    // that runs, cannot.
    if (claimOf(await recordedOwner(connection, namespace, taskQueue), instanceId) !== 'ours') throw taken();
    break;
  }
  logger.info({ namespace, taskQueue }, 'task queue claimed for this database');
}
