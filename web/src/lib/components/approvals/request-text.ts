// The body of a request to be sent, as text a person reads beside an approval decision: JSON
// indented, cut at a number of characters (the marker saying so is the component's).

export const TRUNCATED_MARKER = '… (truncated)';

export interface BodyText {
  text: string;
  truncated: boolean;
}

/** `null` when there is no body to show (none, or empty). */
export function bodyText(body: unknown, limit: number): BodyText | null {
  if (body === undefined || body === null || body === '') return null;
  const full = typeof body === 'string' ? body : JSON.stringify(body, null, 2);
  if (full.length <= limit) return { text: full, truncated: false };
  // Never end on half of a surrogate pair (an emoji cut in two).
  const code = full.charCodeAt(limit - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit;
  return { text: full.slice(0, end), truncated: true };
}
