// The call benchmark's pure parts: its options and the figures it derives from raw samples.
import { describe, expect, it, vi } from 'vitest';
import { byGroup, cpuPerCall, latency, mergeRuns, ratiosToFloor, ratiosToLeast, roundRobin, type MeasuredProcess } from '../../../bench/support/figures.ts';
import { benchSizes, BenchUsageError, parseCallBenchOptions } from '../../../bench/support/options.ts';

describe('bench:call options', () => {
  it('defaults to the embedded target and the documented run sizes', () => {
    expect(parseCallBenchOptions([], {})).toEqual({
      help: false,
      json: false,
      soak: false,
      cluster: null,
      sequential: 300,
      concurrent: 2000,
      concurrency: 16,
      floorConcurrent: 1000,
      resumes: 50,
      soakRounds: 3,
      soakSeconds: 30,
    });
  });

  it('--cluster selects the production shape, 2 API + 2 workers unless told', () => {
    expect(parseCallBenchOptions(['--cluster'], {}).cluster).toEqual({ apiReplicas: 2, workerReplicas: 2 });
    expect(parseCallBenchOptions(['--cluster', '--api', '1', '--workers=3', '--json'], {})).toMatchObject({ json: true, cluster: { apiReplicas: 1, workerReplicas: 3 } });
  });

  it('takes run sizes from BENCH_* variables', () => {
    const o = parseCallBenchOptions([], { BENCH_SEQUENTIAL: '20', BENCH_CONCURRENT: '50', BENCH_CONCURRENCY: '4', BENCH_RESUMES: '3', BENCH_SOAK_SECONDS: '' });
    expect(o).toMatchObject({ sequential: 20, concurrent: 50, concurrency: 4, resumes: 3, soakSeconds: 30 });
  });

  it('refuses what it cannot run, naming the culprit', () => {
    const fails = (argv: string[], env: Record<string, string> = {}) => {
      try {
        parseCallBenchOptions(argv, env);
      } catch (err) {
        expect(err).toBeInstanceOf(BenchUsageError);
        return (err as Error).message;
      }
      throw new Error(`accepted ${argv.join(' ')} ${JSON.stringify(env)}`);
    };
    expect(fails(['--api', '2'])).toMatch(/--cluster only/);
    expect(fails(['--cluster', '--api', '0'])).toMatch(/--api must be a whole number ≥ 1 \(got "0"\)/);
    expect(fails(['--cluster', '--workers', '1.5'])).toMatch(/--workers/);
    expect(fails(['--clutser'])).toMatch(/clutser/);
    expect(fails(['extra'])).toMatch(/extra/);
    expect(fails([], { BENCH_CONCURRENCY: 'sixteen' })).toMatch(/BENCH_CONCURRENCY/);
  });
});

describe('bench:call figures', () => {
  const embedded: MeasuredProcess[] = [
    { name: 'gateway', group: 'gateway', pid: 1, tree: false },
    { name: 'temporal', group: 'temporal', pid: 2, tree: false },
    { name: 'postgres', group: 'postgres', pid: 3, tree: true },
  ];
  const cluster: MeasuredProcess[] = [
    { name: 'api-1', group: 'gateway', pid: 1, tree: false },
    { name: 'api-2', group: 'gateway', pid: 2, tree: false },
    { name: 'worker-1', group: 'gateway', pid: 3, tree: false },
    { name: 'worker-2', group: 'gateway', pid: 4, tree: false },
    { name: 'temporal', group: 'temporal', pid: 5, tree: false },
    { name: 'postgres', group: 'postgres', pid: 6, tree: true },
  ];

  it('nearest-rank percentiles', () => {
    const samples = Array.from({ length: 100 }, (_, i) => 100 - i); // 1..100, unsorted
    expect(latency(samples)).toEqual({ n: 100, p50: 51, p95: 96, p99: 100 });
    expect(latency([])).toMatchObject({ n: 0, p50: Number.NaN });
  });

  it('CPU per call: one figure per group on the embedded target', () => {
    const before = { gateway: 1000, temporal: 500, postgres: 200 };
    const after = { gateway: 1300, temporal: 700, postgres: 250 };
    expect(cpuPerCall(embedded, before, after, 20)).toEqual({ gateway: 15, temporal: 10, postgres: 2.5, total: 27.5 });
  });

  it('CPU per call on the cluster: API and worker replicas summed into gateway, each process kept', () => {
    const before = { 'api-1': 0, 'api-2': 0, 'worker-1': 0, 'worker-2': 0, temporal: 0, postgres: 0 };
    const after = { 'api-1': 300, 'api-2': 310, 'worker-1': 200, 'worker-2': 190, temporal: 1500, postgres: 700 };
    expect(cpuPerCall(cluster, before, after, 100)).toEqual({
      gateway: 10,
      temporal: 15,
      postgres: 7,
      total: 32,
      by_process: { 'api-1': 3, 'api-2': 3.1, 'worker-1': 2, 'worker-2': 1.9, temporal: 15, postgres: 7 },
    });
  });

  it('a process gone in the middle makes its figures n/a rather than wrong', () => {
    const r = cpuPerCall(embedded, { gateway: 10, temporal: 10, postgres: 10 }, { gateway: 20, temporal: Number.NaN, postgres: 20 }, 1);
    expect(r.gateway).toBe(10);
    expect(r.temporal).toBeNaN();
    expect(r.total).toBeNaN();
  });

  it('memory summed over the gateway processes, rounded to whole MB', () => {
    const gateways = cluster.filter((p) => p.group === 'gateway');
    const r = byGroup(gateways, { 'api-1': 150.4, 'api-2': 149.8, 'worker-1': 200.2, 'worker-2': 199.9 }, 0);
    expect(r.gateway).toBe(700);
    expect(r.by_process).toEqual({ 'api-1': 150, 'api-2': 150, 'worker-1': 200, 'worker-2': 200 });
  });

  it('round-robin spreads calls evenly over the API replicas', () => {
    const next = roundRobin(['a', 'b']);
    const counts = { a: 0, b: 0 };
    for (let i = 0; i < 11; i++) counts[next() as 'a' | 'b']++;
    expect(counts).toEqual({ a: 6, b: 5 });
    expect(() => roundRobin([])).toThrow();
  });
});

describe('bench:call ratios to the floor', () => {
  const base = { covered: { p50: 23, p95: 39 }, floor: { p50: 20, p95: 30 }, callsPerSecond: 90, floorPerSecond: 100, gatewayCpuPerCall: 2.6, gatewayCpuPerFloorWorkflow: 2, allowedToUpstreamP50: 26 };

  it('states each headline figure as a ratio to the same run\'s floor, with its goal', () => {
    expect(ratiosToFloor(base)).toEqual({
      covered_p50: { ratio: 1.15, goal: '≤ 1.15×', met: true },
      covered_p95: { ratio: 1.3, goal: '≤ 1.3×', met: true },
      throughput: { ratio: 0.9, goal: '≥ 0.9×', met: true },
      gateway_cpu: { ratio: 1.3, goal: '≤ 1.3×', met: true },
      allowed_to_upstream_p50: { ratio: 1.3, goal: '≤ 1.3×', met: true },
    });
  });

  it('says which goal is missed, on either side', () => {
    const r = ratiosToFloor({ ...base, covered: { p50: 40, p95: 39 }, callsPerSecond: 50 });
    expect(r.covered_p50).toEqual({ ratio: 2, goal: '≤ 1.15×', met: false });
    expect(r.throughput).toEqual({ ratio: 0.5, goal: '≥ 0.9×', met: false });
    expect(ratiosToFloor({ ...base, floorPerSecond: 0 }).throughput.met).toBe(false);
  });

  it('takes the allow to the floor measured beside the allows when there is one', () => {
    // The first floor (20 ms) was measured before the load; beside the allows it was 24 ms.
    expect(ratiosToFloor({ ...base, allowedToUpstreamP50: 30, floorBesideAllowsP50: 24 }).allowed_to_upstream_p50).toEqual({ ratio: 1.25, goal: '≤ 1.3×', met: true });
    expect(ratiosToFloor({ ...base, allowedToUpstreamP50: 30 }).allowed_to_upstream_p50).toEqual({ ratio: 1.5, goal: '≤ 1.3×', met: false });
  });
});

describe('bench:call against the least gateway of the same run', () => {
  const least = { p50: 20, callsPerSecond: 100, cpuPerCall: 8 };

  it('states the covered call as ratios gateway / least, with issue 46\'s goals', () => {
    expect(ratiosToLeast({ p50: 24, callsPerSecond: 80, cpuPerCall: 10.4 }, least)).toEqual({
      gateway_cpu: { ratio: 1.3, goal: '≤ 1.3×', met: true },
      throughput: { ratio: 0.8, goal: '≥ 0.8×', met: true },
      p50: { ratio: 1.2, goal: '≤ 1.2×', met: true },
    });
    const missed = ratiosToLeast({ p50: 30, callsPerSecond: 60, cpuPerCall: 12.8 }, least);
    expect(missed).toEqual({
      gateway_cpu: { ratio: 1.6, goal: '≤ 1.3×', met: false },
      throughput: { ratio: 0.6, goal: '≥ 0.8×', met: false },
      p50: { ratio: 1.5, goal: '≤ 1.2×', met: false },
    });
    expect(ratiosToLeast({ p50: 30, callsPerSecond: 60, cpuPerCall: Number.NaN }, least).gateway_cpu.met).toBe(false);
  });

  it('merges load taken in turns: calls over the summed time, CPU over the summed calls', () => {
    const processes = [
      { name: 'least', group: 'gateway' as const },
      { name: 'temporal', group: 'temporal' as const },
      { name: 'postgres', group: 'postgres' as const },
    ];
    const merged = mergeRuns(processes, [
      { latencies: [10, 20, 30], seconds: 1, cpuMs: { least: 30, temporal: 15, postgres: 3 } },
      { latencies: [40], seconds: 1, cpuMs: { least: 10, temporal: 5, postgres: 1 } },
    ]);
    expect(merged).toEqual({ latencies: [10, 20, 30, 40], perSecond: 2, perCall: { gateway: 10, temporal: 5, postgres: 1, total: 16 } });
  });
});

describe('bench run sizes (bench:least, bench:eager)', () => {
  it('reads BENCH_* variables over the defaults', () => {
    expect(benchSizes('bench:least', { SEQUENTIAL: 300, RESUMES: 60 }, { BENCH_SEQUENTIAL: '40' })).toEqual({ SEQUENTIAL: 40, RESUMES: 60 });
  });

  it('ends the script with one line naming a bad size, and exit code 2', () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation(((code?: number) => {
      throw new Error(`exit ${code}`);
    }) as never);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(() => benchSizes('bench:least', { SEQUENTIAL: 300 }, { BENCH_SEQUENTIAL: 'abc' })).toThrow('exit 2');
      expect(stderr).toHaveBeenCalledWith('bench:least: BENCH_SEQUENTIAL must be a whole number ≥ 1 (got "abc")\n');
      expect(() => benchSizes('bench:eager', { CONCURRENCY: 16 }, { BENCH_CONCURRENCY: '0' })).toThrow('exit 2');
    } finally {
      exit.mockRestore();
      stderr.mockRestore();
    }
  });
});
