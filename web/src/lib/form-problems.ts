// A refused form submission as a person can act on it: each problem the gateway names (a
// validation issue's `path`, a parameter problem's `field`, or `details.field`) placed at the
// control it concerns, and a summary that names every field and why, shown by the submit button.
// Pure: the form says which control an API field is and what the control is called.
import { ApiError } from './api.ts';
import { messageOf } from './errors.ts';

export interface Problem {
  /** The API's field, dotted (`email.host`, `rules.2.routes.0.channel_id`); null: the whole request. */
  field: string | null;
  message: string;
}

export interface PlacedProblems {
  /** Control id → why its value was refused. */
  fields: Record<string, string>;
  /** Every problem in one sentence ("Bot token: must be …; Port: …"), or null when none. */
  summary: string | null;
}

/** `rules[0].routes[1]` → `rules.0.routes.1` (the services name fields the way messages do). */
const dotted = (field: string) => field.replace(/\[(\d+)\]/g, '.$1').replace(/^\./, '');

const listOf = (v: unknown) => (Array.isArray(v) ? (v as Record<string, unknown>[]).filter((x) => x && typeof x === 'object') : []);

/** What a failure says about the request's fields; anything but a gateway answer is one general problem. */
export function problemsOf(err: unknown, fallback: string): Problem[] {
  if (!(err instanceof ApiError)) return [{ field: null, message: messageOf(err, fallback) }];
  const details = err.details ?? {};
  const named = [...listOf(details['issues']).map((i) => ({ at: i['path'], message: i['message'] })), ...listOf(details['problems']).map((p) => ({ at: p['field'], message: p['message'] }))];
  if (named.length) return named.map((n) => ({ field: typeof n.at === 'string' && n.at ? dotted(n.at) : null, message: String(n.message) }));
  return [{ field: typeof details['field'] === 'string' ? dotted(details['field']) : null, message: err.message }];
}

/**
 * Places problems at controls. `controlOf` answers the control id of an API field (null: none
 * on this form), `labelOf` that control's visible label. A problem without a control is named by
 * its API field in the summary.
 */
export function placeProblems(problems: readonly Problem[], controlOf: (field: string) => string | null, labelOf: (controlId: string) => string): PlacedProblems {
  const fields: Record<string, string> = {};
  const parts: string[] = [];
  for (const p of problems) {
    const control = p.field === null ? null : controlOf(p.field);
    if (control) {
      fields[control] = fields[control] ? `${fields[control]}; ${p.message}` : p.message;
      parts.push(`${labelOf(control)}: ${p.message}`);
    } else parts.push(p.field ? `${p.field}: ${p.message}` : p.message);
  }
  return { fields, summary: parts.length ? parts.join('; ') : null };
}
