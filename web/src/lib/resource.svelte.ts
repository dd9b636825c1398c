// The two bits of state every page and form needs around a call to the gateway: data that loads
// (and reloads) with its failure to show, and an action a person starts, busy while it runs, with
// its failure to show. Failures read as errors.ts words them. Call both in a component's script.
import { untrack } from 'svelte';
import { messageOf } from './errors.ts';
import { guarded } from './session.svelte.ts';

export interface Resource<T> {
  /** The last answer (`initial` before the first). Settable: a change the page already knows. */
  value: T;
  /** No answer yet for the current inputs. reload() leaves it alone: the value stays on show. */
  readonly loading: boolean;
  /** Why the last load failed, or null. */
  readonly error: string | null;
  /** Loads again; never throws (a failure lands in `error`). */
  reload(): Promise<void>;
}

/**
 * Runs `load` once the component is mounted, and again whenever state it reads before its first
 * `await` changes (a route parameter, a tab): then `loading` is true and `error` null until the
 * answer. An answer overtaken by a newer load is dropped. A lost session goes to sign-in.
 */
export function resource<T>(load: () => Promise<T>): Resource<T | undefined>;
export function resource<T>(load: () => Promise<T>, initial: NoInfer<T>): Resource<T>;
export function resource<T>(load: () => Promise<T>, initial?: T): Resource<T | undefined> {
  let value = $state(initial);
  let loading = $state(true);
  let error = $state<string | null>(null);
  let latest = 0;

  async function run(): Promise<void> {
    const mine = ++latest;
    try {
      const answer = await guarded(load);
      if (mine !== latest) return;
      value = answer;
      error = null;
    } catch (err) {
      if (mine !== latest) return;
      error = messageOf(err);
    }
    loading = false;
  }

  $effect(() => {
    loading = true;
    error = null;
    void run();
  });

  return {
    get value() {
      return value;
    },
    set value(v) {
      value = v;
    },
    get loading() {
      return loading;
    },
    get error() {
      return error;
    },
    reload: () => untrack(run),
  };
}

export interface Submission<A extends unknown[]> {
  readonly busy: boolean;
  /** Why the last run failed, or null. Settable: a form clears it as the person edits. */
  error: string | null;
  /** Runs the action; true when it succeeded. */
  run(...args: A): Promise<boolean>;
}
export interface FormSubmission extends Submission<[]> {
  /** A form's `onsubmit`: stays on the page and runs the action. */
  onsubmit(e: SubmitEvent): void;
}

/**
 * An action a person starts (a form, a button). `describe` words a failure, or returns null when
 * the form shows it elsewhere (at a field).
 */
export function submit(action: () => Promise<unknown>, describe?: (err: unknown) => string | null): FormSubmission;
export function submit<A extends unknown[]>(action: (...args: A) => Promise<unknown>, describe?: (err: unknown) => string | null): Submission<A>;
export function submit<A extends unknown[]>(
  action: (...args: A) => Promise<unknown>,
  describe: (err: unknown) => string | null = messageOf,
): Submission<A> & Partial<FormSubmission> {
  let busy = $state(false);
  let error = $state<string | null>(null);

  async function run(...args: A): Promise<boolean> {
    busy = true;
    error = null;
    try {
      await action(...args);
      return true;
    } catch (err) {
      error = describe(err);
      return false;
    } finally {
      busy = false;
    }
  }

  return {
    get busy() {
      return busy;
    },
    get error() {
      return error;
    },
    set error(e) {
      error = e;
    },
    run,
    onsubmit(e: SubmitEvent) {
      e.preventDefault();
      void run(...([] as unknown[] as A));
    },
  };
}
