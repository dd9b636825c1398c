// What a statement's plan does to one table, from `EXPLAIN (ANALYZE, FORMAT JSON)`: each node that
// reads the table (sequential, index or bitmap scan), the index it uses and how many rows it read.
import { sql, type CommonQueryMethods, type QuerySqlToken } from 'slonik';
import { z } from 'zod';

/** One node of a JSON plan (the fields read here; PostgreSQL gives many more). */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

export interface TableScan {
  nodeType: string;
  /** The index read (for a bitmap heap scan: those of its bitmap index scans). */
  indexes: string[];
  /** Rows the scan took from the table: those it returned and those its conditions then dropped. */
  rowsRead: number;
}

function nodes(n: PlanNode): PlanNode[] {
  return [n, ...(n.Plans ?? []).flatMap(nodes)];
}

/** Every node of `plan` that reads `table` (a pure walk of the JSON plan). */
export function scansOf(plan: PlanNode, table: string): TableScan[] {
  return nodes(plan)
    .filter((n) => n['Relation Name'] === table)
    .map((n) => {
      // PostgreSQL reports rows and removals per loop.
      const perLoop = (n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Index Recheck'] ?? 0);
      const bitmapIndexes = nodes(n).filter((c) => c['Node Type'] === 'Bitmap Index Scan').map((c) => c['Index Name']!);
      return {
        nodeType: n['Node Type'],
        indexes: n['Index Name'] ? [n['Index Name']] : bitmapIndexes,
        rowsRead: Math.round(perLoop * (n['Actual Loops'] ?? 1)),
      };
    });
}

const planRow = z.object({ 'QUERY PLAN': z.array(z.object({ Plan: z.custom<PlanNode>((v) => typeof v === 'object' && v !== null) })) });

/** Runs `query` under EXPLAIN ANALYZE (it executes: for reads only) and returns its plan's root. */
export async function explainAnalyze(db: CommonQueryMethods, query: QuerySqlToken): Promise<PlanNode> {
  const [result] = await db.oneFirst(sql.type(planRow)`EXPLAIN (ANALYZE, FORMAT JSON) ${query}`);
  return result!.Plan;
}
