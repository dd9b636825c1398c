// CPU time and memory of processes, read from Linux /proc (benchmarks only). CPU is in
// milliseconds of user + system time; a process tree counts its live descendants plus the time of
// descendants that already exited and were waited for (cutime/cstime of their parent).
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on Linux

interface Stat {
  pid: number;
  ppid: number;
  /** utime + stime */
  own: number;
  /** cutime + cstime */
  children: number;
}

function readStat(pid: number): Stat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const n = statFields(text);
  return { pid, ppid: n(4), own: (n(14) + n(15)) * TICK_MS, children: (n(16) + n(17)) * TICK_MS };
}

/** A `stat` file's numeric field by its number in proc(5) (ppid is 4, utime 14, stime 15). */
function statFields(text: string): (field: number) => number {
  // The command name may contain spaces and parentheses: fields start after the last ')'.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (field) => Number(f[field - 3]);
}

/** The process exists and is not a zombie waiting to be reaped. */
export function isRunning(pid: number): boolean {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(text.slice(text.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}

/** CPU ms of one process (all of its threads), or NaN when it is gone. */
export function processCpuMs(pid: number): number {
  const s = readStat(pid);
  return s ? s.own : Number.NaN;
}

/** CPU ms of a process and every descendant (e.g. a PostgreSQL postmaster and its backends). */
export function treeCpuMs(root: number): number {
  const all: Stat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = readStat(Number(name));
    if (s) all.push(s);
  }
  const kids = new Map<number, Stat[]>();
  for (const s of all) kids.set(s.ppid, [...(kids.get(s.ppid) ?? []), s]);
  const rootStat = all.find((s) => s.pid === root);
  if (!rootStat) return Number.NaN;
  let total = rootStat.children;
  const stack = [rootStat];
  while (stack.length) {
    const s = stack.pop()!;
    total += s.own;
    stack.push(...(kids.get(s.pid) ?? []));
  }
  return total;
}

/** Resident set size in MB (VmRSS) and its peak (VmHWM). */
export function memoryMb(pid: number): { rss: number; peak: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
  } catch {
    return { rss: Number.NaN, peak: Number.NaN };
  }
}

/**
 * CPU ms of each of a process's live threads, summed by thread name (`comm`: e.g. the main
 * thread's `node`, libuv's `libuv-worker`, the Temporal core's `tokio-runtime-w`, a worker
 * thread's `WorkerThread`): which thread the work is on.
 */
export function threadCpuMs(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byName;
  }
  for (const tid of tids) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const n = statFields(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
      byName.set(name, (byName.get(name) ?? 0) + (n(14) + n(15)) * TICK_MS);
    } catch {
      // the thread ended meanwhile
    }
  }
  return byName;
}
