// The benchmark's arithmetic, kept apart from its I/O: percentiles, and CPU / memory figures
// split by process and summed by group (gateway processes, Temporal server, PostgreSQL).

export interface Latency {
  n: number;
  p50: number;
  p95: number;
  p99: number;
}

export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Nearest-rank percentiles of `samples` (ms), rounded to 0.01. */
export function latency(samples: readonly number[]): Latency {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
  return { n: s.length, p50: round(at(50)), p95: round(at(95)), p99: round(at(99)) };
}

export type ProcessGroup = 'gateway' | 'temporal' | 'postgres';

/** A process the benchmark accounts for, by name (`gateway`, `api-1`, `worker-2`, `temporal`…). */
export interface MeasuredProcess {
  name: string;
  group: ProcessGroup;
  pid: number;
  /** Count its descendants too (a PostgreSQL postmaster and its backends). */
  tree: boolean;
}

/** CPU ms (or MB) by process name. */
export type Sample = Record<string, number>;

export interface ByGroup {
  gateway: number;
  temporal: number;
  postgres: number;
  total: number;
  /** Only when a group has more than one process (the cluster); else the groups say it all. */
  by_process?: Record<string, number>;
}

/** `after - before` per process, divided by `calls`, summed by group. */
export function cpuPerCall(processes: readonly Pick<MeasuredProcess, 'name' | 'group'>[], before: Sample, after: Sample, calls: number): ByGroup {
  const spent: Sample = {};
  for (const p of processes) spent[p.name] = ((after[p.name] ?? Number.NaN) - (before[p.name] ?? Number.NaN)) / calls;
  return byGroup(processes, spent);
}

/** Per-process values (e.g. RSS in MB) summed by group, rounded to `digits`. */
export function byGroup(processes: readonly Pick<MeasuredProcess, 'name' | 'group'>[], values: Sample, digits = 2): ByGroup {
  const sum = { gateway: 0, temporal: 0, postgres: 0 };
  for (const p of processes) sum[p.group] += values[p.name] ?? Number.NaN;
  const out: ByGroup = {
    gateway: round(sum.gateway, digits),
    temporal: round(sum.temporal, digits),
    postgres: round(sum.postgres, digits),
    total: round(sum.gateway + sum.temporal + sum.postgres, digits),
  };
  const counts = new Map<ProcessGroup, number>();
  for (const p of processes) counts.set(p.group, (counts.get(p.group) ?? 0) + 1);
  if ([...counts.values()].some((n) => n > 1)) {
    out.by_process = Object.fromEntries(processes.map((p) => [p.name, round(values[p.name] ?? Number.NaN, digits)]));
  }
  return out;
}

/** Hands out the items in turn, as a round-robin load balancer does. */
export function roundRobin<T>(items: readonly T[]): () => T {
  if (items.length === 0) throw new Error('roundRobin needs at least one item');
  let turn = 0;
  return () => items[turn++ % items.length]!;
}

/**
 * The goals of issue 28, each a ratio to Temporal's own no-op workflow (Update-with-Start) measured
 * in the same run: absolute times on these shared machines swing 3–4× between runs, ratios do not.
 * `max`: the figure must stay at or below; `min`: at or above. RSS stays an absolute bound.
 */
export const FLOOR_GOALS = {
  covered_p50: { max: 1.15 },
  covered_p95: { max: 1.3 },
  throughput: { min: 0.9 },
  gateway_cpu: { max: 1.3 },
  allowed_to_upstream_p50: { max: 1.3 },
} as const;

export type FloorRatios = Record<keyof typeof FLOOR_GOALS, { ratio: number; goal: string; met: boolean }>;

/** Every headline figure as a ratio to the floor of the same run, with its goal and whether it is met. */
export function ratiosToFloor(r: {
  covered: Pick<Latency, 'p50' | 'p95'>;
  floor: Pick<Latency, 'p50' | 'p95'>;
  callsPerSecond: number;
  floorPerSecond: number;
  gatewayCpuPerCall: number;
  gatewayCpuPerFloorWorkflow: number;
  allowedToUpstreamP50: number;
  /** The floor measured beside the allows (one call before each); else the first floor. */
  floorBesideAllowsP50?: number;
}): FloorRatios {
  const figures: Record<keyof typeof FLOOR_GOALS, number> = {
    covered_p50: r.covered.p50 / r.floor.p50,
    covered_p95: r.covered.p95 / r.floor.p95,
    throughput: r.callsPerSecond / r.floorPerSecond,
    gateway_cpu: r.gatewayCpuPerCall / r.gatewayCpuPerFloorWorkflow,
    allowed_to_upstream_p50: r.allowedToUpstreamP50 / (r.floorBesideAllowsP50 ?? r.floor.p50),
  };
  const out = {} as FloorRatios;
  for (const [k, goal] of Object.entries(FLOOR_GOALS) as Array<[keyof typeof FLOOR_GOALS, { max?: number; min?: number }]>) {
    const ratio = round(figures[k]);
    const met = Number.isFinite(ratio) && (goal.max !== undefined ? ratio <= goal.max : ratio >= goal.min!);
    out[k] = { ratio, goal: goal.max !== undefined ? `≤ ${goal.max}×` : `≥ ${goal.min}×`, met };
  }
  return out;
}

/**
 * The goals of issue 46 against the least gateway of the covered call's shape
 * (bench/support/least-call-gateway.ts) measured in the same run: the gateway's own CPU per covered
 * call, its throughput at concurrency 16 and its sequential p50, each as a ratio gateway / least.
 */
export const LEAST_GOALS = {
  gateway_cpu: { max: 1.3 },
  throughput: { min: 0.8 },
  p50: { max: 1.2 },
} as const;

export type LeastRatios = Record<keyof typeof LEAST_GOALS, { ratio: number; goal: string; met: boolean }>;

export interface ShapeFigures {
  p50: number;
  callsPerSecond: number;
  /** The serving process's own CPU ms per call. */
  cpuPerCall: number;
}

/** The gateway's figures as ratios to the least gateway's, each with its goal and whether it is met. */
export function ratiosToLeast(gateway: ShapeFigures, least: ShapeFigures): LeastRatios {
  const figures: Record<keyof typeof LEAST_GOALS, number> = {
    gateway_cpu: gateway.cpuPerCall / least.cpuPerCall,
    throughput: gateway.callsPerSecond / least.callsPerSecond,
    p50: gateway.p50 / least.p50,
  };
  const out = {} as LeastRatios;
  for (const [k, goal] of Object.entries(LEAST_GOALS) as Array<[keyof typeof LEAST_GOALS, { max?: number; min?: number }]>) {
    const ratio = round(figures[k]);
    const met = Number.isFinite(ratio) && (goal.max !== undefined ? ratio <= goal.max : ratio >= goal.min!);
    out[k] = { ratio, goal: goal.max !== undefined ? `≤ ${goal.max}×` : `≥ ${goal.min}×`, met };
  }
  return out;
}

/** One stretch of load: its latencies, how long it took, and the CPU ms each process spent. */
export interface LoadRun {
  latencies: number[];
  seconds: number;
  cpuMs: Sample;
}

/**
 * Stretches of the same load taken in turns with another (so drift weighs on both) as one run:
 * calls per second over their summed time, CPU per call by group over their summed calls.
 */
export function mergeRuns(processes: readonly Pick<MeasuredProcess, 'name' | 'group'>[], runs: readonly LoadRun[]): { latencies: number[]; perSecond: number; perCall: ByGroup } {
  const latencies = runs.flatMap((r) => r.latencies);
  const seconds = runs.reduce((sum, r) => sum + r.seconds, 0);
  const spent: Sample = {};
  for (const p of processes) spent[p.name] = runs.reduce((sum, r) => sum + (r.cpuMs[p.name] ?? Number.NaN), 0);
  const zero = Object.fromEntries(processes.map((p) => [p.name, 0]));
  return { latencies, perSecond: round(latencies.length / seconds, 1), perCall: cpuPerCall(processes, zero, spent, latencies.length) };
}
