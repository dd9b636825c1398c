// How the benchmarks drive calls: one timed, or many by a fixed number of concurrent loops.
import { round } from './figures.ts';

/** How long one call took, in ms. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** `total` calls by `concurrency` loops; or, with `seconds`, as many as fit in that time. */
export async function runConcurrent(opts: { total?: number; seconds?: number; concurrency: number }, fn: () => Promise<unknown>) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const deadline = opts.seconds ? started + opts.seconds * 1000 : Infinity;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while ((opts.total === undefined || next < opts.total) && performance.now() < deadline) {
        next++;
        latencies.push(await timed(fn));
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { latencies, seconds, perSecond: round(latencies.length / seconds, 1) };
}

/**
 * `total` sequential calls of each shape, the shapes alternated in blocks of `block` calls, so a
 * busy machine weighs on all alike; not call by call: a call that answers before its workflow
 * completes must meet its own predecessor's completion, as a real one does. The samples by shape.
 */
export async function alternatedInBlocks(total: number, block: number, shapes: ReadonlyArray<() => Promise<number>>): Promise<number[][]> {
  const samples = shapes.map(() => [] as number[]);
  for (let i = 0; i < total; i += block) {
    for (const [s, shape] of shapes.entries()) {
      for (let j = 0; j < block && i + j < total; j++) samples[s]!.push(await shape());
    }
  }
  return samples;
}
