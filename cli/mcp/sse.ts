// A minimal Server-Sent Events parser: feed it text as it arrives, get back the `data` of each
// complete event (comments, `retry:` and `id:` lines are dropped).
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private ending = false;

  push(chunk: string): string[] {
    this.buffer += chunk;
    const out: string[] = [];
    let nl: number;
    while ((nl = this.buffer.search(/\r\n|\r|\n/)) !== -1) {
      // A CR at the very end may be the first half of a CRLF split across chunks.
      if (nl === this.buffer.length - 1 && this.buffer.endsWith('\r') && !this.ending) break;
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + (this.buffer.startsWith('\r\n', nl) ? 2 : 1));
      if (line === '') {
        if (this.data.length > 0) out.push(this.data.join('\n'));
        this.data = [];
      } else if (line.startsWith('data:')) {
        this.data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      }
    }
    return out;
  }

  /** The last event when the stream ends without a blank line. */
  end(): string[] {
    this.ending = true;
    const out = this.push('\n\n');
    this.buffer = '';
    return out;
  }
}

/** Every event's data of a complete SSE body. */
export function parseSseBody(text: string): string[] {
  const p = new SseParser();
  return [...p.push(text), ...p.end()];
}
