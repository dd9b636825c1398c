// Worker thread of the disclose pool (disclose.ts): runs one jq filter at a time over the
// disclose projection. It lives in its own thread because a filter that loops forever blocks
// jq-wasm's thread: the pool then terminates this worker and starts another. Runnable by Node 24
// directly (type stripping), so no build step is involved.
import { parentPort } from 'node:worker_threads';
import { runJq } from '../registry/jq.ts';

export interface DiscloseJob {
  id: number;
  /** JSON text of the (capped) projection. */
  input: string;
  filter: string;
  /** Raw jq output beyond this many characters is cut (the pool marks the value truncated). */
  maxOutputChars: number;
}

export type DiscloseJobResult =
  | { id: number; ok: true; output: string; truncated: boolean }
  | { id: number; ok: false; message: string };

const port = parentPort;
if (port) {
  // Instantiating jq-wasm takes a few milliseconds: do it before saying ready, so the pool's
  // per-filter time limit only counts the filter.
  try {
    await runJq('null', '.', ['-c']);
  } catch {
    /* the first job reports the error */
  }
  port.on('message', (job: DiscloseJob) => {
    void run(job).then((result) => port.postMessage(result));
  });
  port.postMessage({ ready: true });
}

async function run(job: DiscloseJob): Promise<DiscloseJobResult> {
  try {
    // All outputs of the filter in one JSON array; the newline keeps a trailing `# comment`
    // from swallowing the bracket (the loader compile-checked this very wrapping).
    const output = await runJq(job.input, `[${job.filter}\n]`, ['-c']);
    const truncated = output.length > job.maxOutputChars;
    return { id: job.id, ok: true, output: truncated ? output.slice(0, job.maxOutputChars) : output, truncated };
  } catch (err) {
    return { id: job.id, ok: false, message: String((err as Error)?.message ?? err).slice(0, 500) };
  }
}
