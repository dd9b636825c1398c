// `npm run bench:call` options: flags from the command line, run sizes from BENCH_* variables.
import { parseArgs } from 'node:util';

export interface CallBenchOptions {
  help: boolean;
  json: boolean;
  soak: boolean;
  /** The production shape (server/cluster) instead of the embedded defaults. */
  cluster: { apiReplicas: number; workerReplicas: number } | null;
  sequential: number;
  concurrent: number;
  concurrency: number;
  floorConcurrent: number;
  resumes: number;
  soakRounds: number;
  soakSeconds: number;
}

export class BenchUsageError extends Error {}

export const CALL_BENCH_USAGE = `npm run bench:call -- [--help] [--json] [--soak] [--cluster [--api N] [--workers N]]

  --json      the figures as one JSON object on stdout
  --soak      also rounds of 30 s at concurrency 16 (memory)
  --cluster   the production shape (npm run cluster): Temporal server on PostgreSQL,
              --api N API replicas (default 2, calls spread round-robin) and --workers N
              worker replicas (default 2), in a throwaway folder
Sizes: BENCH_SEQUENTIAL=300 BENCH_CONCURRENT=2000 BENCH_CONCURRENCY=16 BENCH_FLOOR_CONCURRENT=1000
       BENCH_RESUMES=50 BENCH_SOAK_ROUNDS=3 BENCH_SOAK_SECONDS=30`;

/** A whole number ≥ `min`, or a BenchUsageError naming where it came from (every bench's run sizes). */
function count(name: string, raw: string | undefined, fallback: number, min = 1): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new BenchUsageError(`${name} must be a whole number ≥ ${min} (got ${JSON.stringify(raw)})`);
  return n;
}

/**
 * A bench script's run sizes from BENCH_* variables (`{ SEQUENTIAL: 300 }` reads BENCH_SEQUENTIAL):
 * a bad one ends the script with one line naming it and exit code 2, as a usage error does.
 */
export function benchSizes<K extends string>(script: string, defaults: Record<K, number>, env: Readonly<Record<string, string | undefined>> = process.env): Record<K, number> {
  try {
    return Object.fromEntries(Object.entries<number>(defaults).map(([k, v]) => [k, count(`BENCH_${k}`, env[`BENCH_${k}`], v)])) as Record<K, number>;
  } catch (err) {
    if (!(err instanceof BenchUsageError)) throw err;
    process.stderr.write(`${script}: ${err.message}\n`);
    process.exit(2);
  }
}

export function parseCallBenchOptions(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): CallBenchOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        json: { type: 'boolean', default: false },
        soak: { type: 'boolean', default: false },
        cluster: { type: 'boolean', default: false },
        api: { type: 'string' },
        workers: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new BenchUsageError((err as Error).message);
  }
  if (!values.cluster && (values.api !== undefined || values.workers !== undefined)) {
    throw new BenchUsageError('--api and --workers apply to --cluster only');
  }
  return {
    help: values.help,
    json: values.json,
    soak: values.soak,
    cluster: values.cluster ? { apiReplicas: count('--api', values.api, 2), workerReplicas: count('--workers', values.workers, 2) } : null,
    sequential: count('BENCH_SEQUENTIAL', env.BENCH_SEQUENTIAL, 300),
    concurrent: count('BENCH_CONCURRENT', env.BENCH_CONCURRENT, 2000),
    concurrency: count('BENCH_CONCURRENCY', env.BENCH_CONCURRENCY, 16),
    floorConcurrent: count('BENCH_FLOOR_CONCURRENT', env.BENCH_FLOOR_CONCURRENT, 1000),
    resumes: count('BENCH_RESUMES', env.BENCH_RESUMES, 50),
    soakRounds: count('BENCH_SOAK_ROUNDS', env.BENCH_SOAK_ROUNDS, 3),
    soakSeconds: count('BENCH_SOAK_SECONDS', env.BENCH_SOAK_SECONDS, 30),
  };
}
