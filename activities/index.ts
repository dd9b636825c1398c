// Activities do all I/O for workflows. One factory, narrowed dependencies (DESIGN.md §6).
import type { DatabasePool } from 'slonik';
import type { Logger } from '../server/logger.ts';
import { createDiagnosticActivities } from './diagnostics.ts';

export interface ActivityDeps {
  pool: DatabasePool;
  logger: Logger;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createDiagnosticActivities(deps),
  };
}
