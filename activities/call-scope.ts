// Every activity runs in a call scope (server/telemetry/log-context.ts): what it logs carries the
// call id its input names, whichever logger writes the line.
import { inCallScope } from '../server/telemetry/log-context.ts';

/** The call an activity's input is about: `{ spec }`, `{ callId }` or `{ step: { spec } }` (an allow's send). */
export function callIdOf(input: unknown): string | undefined {
  if (!input || typeof input !== 'object') return undefined;
  const i = input as { spec?: { callId?: unknown }; callId?: unknown; step?: { spec?: { callId?: unknown } } };
  const id = i.spec?.callId ?? i.callId ?? i.step?.spec?.callId;
  return typeof id === 'string' ? id : undefined;
}

/** The same activities, each run in a call scope named by its input. */
export function inCallScopes<T extends Record<string, (...args: never[]) => unknown>>(activities: T): T {
  const scoped: Record<string, (...args: never[]) => unknown> = {};
  for (const [name, fn] of Object.entries(activities)) {
    scoped[name] = (...args: never[]) => inCallScope(() => fn(...args), callIdOf(args[0]));
  }
  return scoped as T;
}
