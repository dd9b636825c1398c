// The CPU profile summary bench:call's profiles are read with (bench/support/profile-summary.ts).
import { describe, expect, it } from 'vitest';
import { isOwnFrame, moduleOf, summariseProfile, type CpuProfile } from '../../../bench/support/profile-summary.ts';

const ROOT = '/repo';
const frame = (functionName: string, url: string, lineNumber = 0) => ({ functionName, url, lineNumber });

/** root → handler (ours) → parse (a package) → JSON.parse (native); plus idle and the GC. */
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)', ''), children: [2, 5, 6] },
    { id: 2, callFrame: frame('handle', 'file:///repo/server/calls/start.ts', 9), children: [3] },
    { id: 3, callFrame: frame('parse', 'file:///repo/node_modules/@scope/lib/index.js', 4), children: [4] },
    { id: 4, callFrame: frame('parse', ''), children: [] },
    { id: 5, callFrame: frame('(idle)', ''), children: [] },
    { id: 6, callFrame: frame('(garbage collector)', ''), children: [] },
  ],
  startTime: 0,
  // Samples: handle 1 ms, lib parse 2 ms, JSON.parse 3 ms, idle 10 ms, GC 4 ms (each sample's
  // time is the gap to the next one; the last one's runs to endTime).
  samples: [2, 3, 4, 5, 6],
  timeDeltas: [0, 1000, 2000, 3000, 10000],
  endTime: 20000,
};

describe('profile summary', () => {
  it('names modules: packages (scoped too), project files, node internals, V8 buckets', () => {
    expect(moduleOf('file:///repo/node_modules/@scope/lib/dist/x.js', 'f', ROOT)).toBe('@scope/lib');
    expect(moduleOf('file:///repo/node_modules/pg/lib/client.js', 'f', ROOT)).toBe('pg');
    expect(moduleOf('file:///repo/server/calls/start.ts', 'f', ROOT)).toBe('server/calls/start.ts');
    expect(moduleOf('node:internal/streams/readable', 'f', ROOT)).toBe('node:internal/streams/readable');
    expect(moduleOf('', '(garbage collector)', ROOT)).toBe('(garbage collector)');
    expect(moduleOf('', 'stringify', ROOT)).toBe('(native)');
    expect(isOwnFrame('file:///repo/server/x.ts', ROOT)).toBe(true);
    expect(isOwnFrame('file:///repo/node_modules/pg/x.js', ROOT)).toBe(false);
  });

  it('adds self time per function and module, leaves idle out of the shares, and charges samples to the nearest own frame', () => {
    const s = summariseProfile(profile, ROOT);
    expect({ total: s.total_ms, idle: s.idle_ms, busy: s.busy_ms }).toEqual({ total: 20, idle: 10, busy: 10 });
    expect(s.byModule).toEqual([
      { name: '(garbage collector)', ms: 4, pct: 40 },
      { name: '(native)', ms: 3, pct: 30 },
      { name: '@scope/lib', ms: 2, pct: 20 },
      { name: 'server/calls/start.ts', ms: 1, pct: 10 },
    ]);
    expect(s.byFunction[0]).toEqual({ name: '(garbage collector)', ms: 4, pct: 40 });
    expect(s.byFunction.map((r) => r.name)).toContain('parse @scope/lib:5');
    // The library's and the native parse both ran for our handler: 6 ms charged to it.
    expect(s.byOwnCaller).toEqual([
      { name: 'handle server/calls/start.ts:10', ms: 6, pct: 60 },
      { name: '(no frame of this project)', ms: 4, pct: 40 },
    ]);
  });

  it('keeps only the samples taken within a window (the measured calls, not start-up)', () => {
    // Samples are taken at 0, 1000, 3000, 6000 and 16000 µs: the window keeps lib parse, JSON.parse and idle.
    const s = summariseProfile(profile, ROOT, 25, { fromUs: 1000, toUs: 6000 });
    expect({ total: s.total_ms, idle: s.idle_ms, busy: s.busy_ms }).toEqual({ total: 15, idle: 10, busy: 5 });
    expect(s.byModule.map((r) => r.name)).toEqual(['(native)', '@scope/lib']);
  });
});
