// The people's event stream with many open dashboards (issue 46): `streams` GET /v1/events streams,
// each a distinct session of a signed-in admin of one org (people and sessions inserted with two
// statements, not signed in through the API), then `rounds` approvals raised one after the other.
// For each approval, the time from sending the call that raises it to its `approval.raised` event
// arriving on each stream: p50/p95/max over every (stream, approval), whether all arrived within
// the deadline, and how many streams received an event more than once. Goal: all within 1 s.
import http from 'node:http';
import { seedSignedInPeople } from '../../test/support/signed-in-people.ts';
import { latency, round, type Latency } from './figures.ts';

export { seedSignedInPeople };

export const STREAMS_GOAL = { max_ms: 1_000 } as const;

export interface StreamsScaleTarget {
  baseUrl: string;
  databaseUrl: string;
  orgId: string;
  /** Raises one approval the org's admins see; resolves to its id. */
  raise: () => Promise<string>;
}

export interface StreamsScaleOptions {
  streams?: number;
  rounds?: number;
  /** How long to wait for an approval to reach every stream before counting it missing. */
  waitMs?: number;
}

export interface StreamsScaleResult {
  streams: number;
  approvals: number;
  arrival_ms: Latency & { max: number };
  /** (stream, approval) pairs that arrived within waitMs, of all. */
  arrived: number;
  expected: number;
  /** Streams that received one approval's `approval.raised` more than once. */
  duplicates: number;
  /** Per approval: how long the raising call took to answer, and the first and last arrival. */
  rounds: Array<{ raise_ms: number; first_ms: number; last_ms: number }>;
  goal: { max_ms: number; met: boolean };
}

interface OpenStream {
  /** approval id → arrival times (performance.now()) of its `approval.raised` events. */
  raised: Map<string, number[]>;
  ready: Promise<void>;
  close(): void;
}

/** One GET /v1/events on its own connection; notes when each `approval.raised` arrives. */
function openStream(baseUrl: string, token: string): OpenStream {
  const raised = new Map<string, number[]>();
  let markReady!: () => void;
  let fail!: (err: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    fail = reject;
  });
  const req = http.get(`${baseUrl}/v1/events`, { agent: false, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } }, (res) => {
    if (res.statusCode !== 200) return fail(new Error(`GET /v1/events: ${res.statusCode}`));
    res.setEncoding('utf8');
    let buf = '';
    res.on('data', (chunk: string) => {
      const at = performance.now();
      buf += chunk;
      for (let cut = buf.indexOf('\n\n'); cut >= 0; cut = buf.indexOf('\n\n')) {
        const lines = buf.slice(0, cut).split('\n');
        buf = buf.slice(cut + 2);
        const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
        if (event === 'ready') markReady();
        if (event !== 'approval.raised') continue;
        const data = JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice(6)) as { approval_id: string };
        raised.set(data.approval_id, [...(raised.get(data.approval_id) ?? []), at]);
      }
    });
    res.on('error', () => undefined);
  });
  req.on('error', (err) => fail(err));
  return { raised, ready, close: () => req.destroy() };
}

/** Opens the streams, raises `rounds` approvals one after the other, and times their arrival. */
export async function measureStreams(t: StreamsScaleTarget, opts: StreamsScaleOptions = {}): Promise<StreamsScaleResult> {
  const n = opts.streams ?? 500;
  const rounds = opts.rounds ?? 3;
  const waitMs = opts.waitMs ?? 10_000;
  const tokens = (await seedSignedInPeople(t.databaseUrl, t.orgId, n)).map((p) => p.token);
  const streams: OpenStream[] = [];
  try {
    // Opened in batches (a browser's dashboards arrive over time, not in one instant).
    for (let i = 0; i < tokens.length; i += 50) {
      const batch = tokens.slice(i, i + 50).map((token) => openStream(t.baseUrl, token));
      streams.push(...batch);
      await Promise.all(batch.map((s) => s.ready));
    }
    const arrivals: number[] = [];
    let duplicates = 0;
    const perRound: StreamsScaleResult['rounds'] = [];
    for (let r = 0; r < rounds; r++) {
      const sent = performance.now();
      const approvalId = await t.raise();
      const answered = performance.now() - sent;
      const deadline = sent + waitMs;
      while (performance.now() < deadline && streams.some((s) => !s.raised.has(approvalId))) await new Promise((res) => setTimeout(res, 10));
      // A moment more, so a second delivery of the same event would be seen.
      await new Promise((res) => setTimeout(res, 200));
      const firsts: number[] = [];
      for (const s of streams) {
        const times = s.raised.get(approvalId) ?? [];
        if (times[0] !== undefined && times[0] - sent <= waitMs) firsts.push(times[0] - sent);
        if (times.length > 1) duplicates++;
      }
      arrivals.push(...firsts);
      perRound.push({ raise_ms: round(answered), first_ms: round(Math.min(...firsts)), last_ms: round(Math.max(...firsts)) });
    }
    const expected = n * rounds;
    const max = round(Math.max(...arrivals));
    return {
      streams: n,
      approvals: rounds,
      arrival_ms: { ...latency(arrivals), max },
      arrived: arrivals.length,
      expected,
      duplicates,
      rounds: perRound,
      goal: { max_ms: STREAMS_GOAL.max_ms, met: arrivals.length === expected && max <= STREAMS_GOAL.max_ms },
    };
  } finally {
    for (const s of streams) s.close();
  }
}

export function describeStreams(r: StreamsScaleResult): string {
  return [
    `${r.streams} open event streams (distinct sessions of one org's admins), ${r.approvals} approvals raised one after the other`,
    `arrival after the raising call was sent: p50 ${r.arrival_ms.p50} ms, p95 ${r.arrival_ms.p95} ms, max ${r.arrival_ms.max} ms; arrived ${r.arrived}/${r.expected}, streams with a duplicate ${r.duplicates}`,
    ...r.rounds.map((x, i) => `  approval ${i + 1}: the raising call answered in ${x.raise_ms} ms; first stream ${x.first_ms} ms, last ${x.last_ms} ms`),
    `goal: every stream within ${r.goal.max_ms} ms: ${r.goal.met ? 'met' : 'MISSED'}`,
  ].join('\n');
}
