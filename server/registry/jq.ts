// jq through jq-wasm 1.0.1, hardened against what fuzzing the disclose filters showed:
//  - one wasm instance survives only ~250-315 calls (fewer with longer filters): it then
//    aborts ("Unknown function type", "memory access out of bounds") or, with failing filters,
//    spins forever inside wasm and blocks the event loop. So an instance is retired after
//    MAX_CALLS and after any failure, and a call that crashes the runtime is retried once on a
//    fresh instance (creating one takes ~10 ms).
//  - Emscripten's exit() writes process.exitCode (3 after a compile error, 5 after a runtime
//    error), which would make a healthy gateway exit non-zero; it is restored after each call.
//  - input is fed to jq one byte at a time with a copy per byte (quadratic): fine for the
//    compile checks here (input `null`), too slow for inputs of hundreds of kilobytes.
// jq-wasm's own singleton cannot be retired, so the Emscripten factory it wraps is used directly.

import { createRequire } from 'node:module';

interface JqInstance {
  raw(input: string, filter: string, flags?: string[]): Promise<string>;
}

const createInstance = createRequire(import.meta.url)('jq-wasm/dist/build/jq.js') as () => Promise<JqInstance>;

const MAX_CALLS = 50;

let current: { instance: Promise<JqInstance>; calls: number } | undefined;

function acquire(): { instance: Promise<JqInstance>; calls: number } {
  if (current === undefined || current.calls >= MAX_CALLS) current = { instance: createInstance(), calls: 0 };
  current.calls++;
  return current;
}

/** Starts compiling the wasm module now (it compiles off the main thread) so the first check waits less. */
export function prewarmJq(): void {
  if (current === undefined) current = { instance: createInstance(), calls: 0 };
}

/** Runs `filter` over JSON text and returns jq's raw output; throws with jq's error message. */
export async function runJq(input: string, filter: string, flags: readonly string[] = []): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const slot = acquire();
    const exitCode = process.exitCode;
    try {
      return await (await slot.instance).raw(input, filter, [...flags]);
    } catch (err) {
      if (current === slot) current = undefined;
      const error = err instanceof Error ? err : new Error(String((err as { message?: unknown })?.message ?? err));
      // jq reports its own errors on stderr as `jq: error...`; anything else is the runtime dying.
      if (error.message.startsWith('jq: ') || attempt >= 1) throw error;
    } finally {
      process.exitCode = exitCode;
    }
  }
}

/**
 * Compile check for a filter without running it: jq has no compile-only mode, so the filter is
 * compiled behind `empty |`, which never evaluates it (no endless loops, no side effects).
 * Compiling it inside both `( )` and `[ ]` rejects filters that only parse because they close
 * the wrapper early, e.g. `.) | (.`. Returns jq's message, or undefined when it compiles.
 */
export async function jqCompileError(filter: string): Promise<string | undefined> {
  return (await compileError(`(${filter}\n)`)) ?? (await compileError(`[${filter}\n]`));
}

/**
 * The same check for many filters, one jq call in the common all-valid case (each call costs
 * about a millisecond); when the combined program fails, each filter is checked on its own.
 */
export async function jqCompileErrors(filters: readonly string[]): Promise<Array<string | undefined>> {
  if (filters.length === 0) return [];
  const combined = filters.map((f) => `(${f}\n), [${f}\n]`).join(', ');
  if ((await compileError(`(${combined})`)) === undefined) return filters.map(() => undefined);
  const out: Array<string | undefined> = [];
  for (const f of filters) out.push(await jqCompileError(f));
  return out;
}

async function compileError(wrapped: string): Promise<string | undefined> {
  try {
    await runJq('null', `empty | ${wrapped}`, ['-n']);
    return undefined;
  } catch (err) {
    const first = (err as Error).message.split('\n')[0] ?? '';
    return first.replace(/^jq: error: /, '').trim() || 'jq filter does not compile';
  }
}
