// Where a V8 CPU profile (.cpuprofile, written by `node --cpu-prof`, i.e. BENCH_PROFILE_DIR) spent
// its time: self time by function and by module (a package under node_modules, a file of this
// project, node's internals, V8's own buckets such as the garbage collector), and every sample
// charged to the nearest frame of this project's own code on its stack — which of our functions
// asked for the work a library or node did. Pure: takes the parsed profile, returns tables.
//   node bench/support/profile-summary.ts <file.cpuprofile>… [--top 25]   (one profile per thread)

export interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber?: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  /** µs since the previous sample (the first: since startTime). */
  timeDeltas: number[];
}

export interface Row {
  name: string;
  ms: number;
  /** Share of the busy time (everything but idle), in %. */
  pct: number;
}

export interface ProfileSummary {
  /** Sampled time, idle included (ms). */
  total_ms: number;
  idle_ms: number;
  busy_ms: number;
  byFunction: Row[];
  byModule: Row[];
  /** Each busy sample charged to the nearest frame of this project's code (outside node_modules). */
  byOwnCaller: Row[];
}

/** V8's own buckets: not functions of any script. */
const IDLE = '(idle)';

/** The module a frame belongs to: `pkg` under node_modules, a project path, `node:…`, or V8's bucket. */
export function moduleOf(url: string, functionName: string, projectRoot: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + '/node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  if (url.startsWith('node:')) return url;
  const path = url.replace(/^file:\/\//, '');
  const root = projectRoot.endsWith('/') ? projectRoot : projectRoot + '/';
  return path.startsWith(root) ? path.slice(root.length) : path;
}

/** True for a frame of this project's own code (not a package, not node, not V8). */
export function isOwnFrame(url: string, projectRoot: string): boolean {
  const path = url.replace(/^file:\/\//, '');
  return path.startsWith(projectRoot) && !path.includes('/node_modules/');
}

function rows(totals: Map<string, number>, busyMs: number, top: number): Row[] {
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, us]) => ({ name, ms: Math.round(us / 10) / 100, pct: busyMs > 0 ? Math.round((us / 1000 / busyMs) * 1000) / 10 : 0 }));
}

const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);

/** A span of the profiled process's monotonic clock, in µs (`process.hrtime.bigint() / 1000n` of any process on the machine). */
export interface ProfileWindow {
  fromUs: number;
  toUs: number;
}

/** `window`: only the samples taken within it (the measured calls, without start-up and warm-up). */
export function summariseProfile(profile: CpuProfile, projectRoot: string, top = 25, window?: ProfileWindow): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (n: CpuProfileNode) => {
    const f = n.callFrame;
    const where = moduleOf(f.url, f.functionName, projectRoot);
    const name = f.functionName || '(anonymous)';
    return where === name ? name : `${name} ${where}:${f.lineNumber + 1}`;
  };
  /** The nearest own frame at or above a node (memoised: the tree is shared by many samples). */
  const ownCaller = new Map<number, string>();
  const nearestOwn = (id: number): string => {
    const seen: number[] = [];
    let found = '(no frame of this project)';
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const cached = ownCaller.get(at);
      if (cached !== undefined) {
        found = cached;
        break;
      }
      seen.push(at);
      const n = byId.get(at)!;
      if (isOwnFrame(n.callFrame.url, projectRoot)) {
        found = label(n);
        break;
      }
    }
    for (const s of seen) ownCaller.set(s, found);
    return found;
  };

  const fn = new Map<string, number>();
  const mod = new Map<string, number>();
  const own = new Map<string, number>();
  let total = 0;
  let idle = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (window && (at < window.fromUs || at > window.toUs)) return;
    // A sample's time is the gap to the next one (the last sample: to the profile's end).
    const us = i + 1 < profile.timeDeltas.length ? profile.timeDeltas[i + 1]! : Math.max(0, profile.endTime - at);
    const n = byId.get(id);
    if (!n) return;
    total += us;
    if (n.callFrame.functionName === IDLE) {
      idle += us;
      return;
    }
    add(fn, label(n), us);
    add(mod, moduleOf(n.callFrame.url, n.callFrame.functionName, projectRoot), us);
    add(own, nearestOwn(id), us);
  });
  const busyMs = (total - idle) / 1000;
  return {
    total_ms: Math.round(total / 1000),
    idle_ms: Math.round(idle / 1000),
    busy_ms: Math.round(busyMs),
    byFunction: rows(fn, busyMs, top),
    byModule: rows(mod, busyMs, top),
    byOwnCaller: rows(own, busyMs, top),
  };
}

/** `calls`: how many calls the profile covers, to print each row's µs per call too. */
export function renderSummary(s: ProfileSummary, calls?: number): string {
  const perCall = (ms: number) => (calls ? `  ${((ms * 1000) / calls).toFixed(0).padStart(5)} µs/call` : '');
  const table = (title: string, rs: Row[]) => [title, ...rs.map((r) => `  ${r.pct.toFixed(1).padStart(5)} %  ${r.ms.toFixed(0).padStart(7)} ms${perCall(r.ms)}  ${r.name}`)];
  return [
    `sampled ${s.total_ms} ms, idle ${s.idle_ms} ms, busy ${s.busy_ms} ms${perCall(s.busy_ms)} (percentages of busy time)`,
    ...table('self time by module:', s.byModule),
    ...table('self time by function:', s.byFunction),
    ...table('charged to the nearest frame of this project:', s.byOwnCaller),
  ].join('\n');
}

if (import.meta.main) {
  const { readFile } = await import('node:fs/promises');
  const { parseArgs } = await import('node:util');
  const path = await import('node:path');
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' } } });
  if (positionals.length === 0) {
    process.stderr.write('usage: node bench/support/profile-summary.ts <file.cpuprofile>… [--top 25]\n');
    process.exit(2);
  }
  for (const file of positionals) {
    const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
    process.stdout.write(`== ${path.basename(file)}\n${renderSummary(summariseProfile(profile, path.resolve(import.meta.dirname, '..', '..'), Number(values.top)))}\n\n`);
  }
}
