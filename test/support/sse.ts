// A Server-Sent Events reader for tests: fetch with a streaming body, frames parsed as they come.
export interface SseEvent {
  id?: string;
  event: string;
  data: any;
}

export interface SseStream {
  status: number;
  events: SseEvent[];
  /** Waits until an event satisfying `ok` has arrived (generous bound; the machine may be loaded). */
  waitFor(ok: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** Settles when the server ends the stream (or it is closed here). */
  ended: Promise<void>;
  close(): void;
}

/** GET by default; `init` sends another method with a body (a stream answering a POST, as MCP's). */
export async function openSse(url: string, headers: Record<string, string>, init: { method?: string; body?: string } = {}): Promise<SseStream> {
  const ac = new AbortController();
  const res = await fetch(url, { ...init, headers: { accept: 'text/event-stream', ...headers }, signal: ac.signal });
  const events: SseEvent[] = [];
  const waiters = new Set<() => void>();
  let ended: Promise<void> = Promise.resolve();
  if (res.ok && res.body) {
    ended = (async () => {
      const decoder = new TextDecoder();
      let buf = '';
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buf += decoder.decode(chunk, { stream: true });
          let cut: number;
          while ((cut = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            const e: SseEvent = { event: 'message', data: undefined };
            let data = '';
            let any = false;
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) continue;
              const [k, ...rest] = line.split(':');
              const v = rest.join(':').replace(/^ /, '');
              if (k === 'id') e.id = v;
              else if (k === 'event') e.event = v;
              else if (k === 'data') {
                data += v;
                any = true;
              }
            }
            if (!any) continue;
            e.data = JSON.parse(data);
            events.push(e);
            for (const w of waiters) w();
          }
        }
      } catch {
        /* aborted */
      }
    })();
  }
  return {
    status: res.status,
    events,
    ended,
    async waitFor(ok, timeoutMs = 30_000) {
      const found = events.find(ok);
      if (found) return found;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching event; got ${JSON.stringify(events)}`));
        }, timeoutMs);
        const check = () => {
          const e = events.find(ok);
          if (!e) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(e);
        };
        waiters.add(check);
      });
    },
    close: () => ac.abort(),
  };
}
