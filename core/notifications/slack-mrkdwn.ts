// Text for Slack's mrkdwn (blocks' `mrkdwn` text, a message's fallback `text`, ephemeral answers).
// Slack reads `<…>` as a control sequence (`<!here>`, `<@U…>`, `<https://x|label>`), so every value
// not written by the gateway (agent and person names, descriptions, disclosed values, reasons) has
// its `&`, `<` and `>` escaped as Slack documents; then it can only show as the text it is. Pure.

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** `&`, `<`, `>` as `&amp;`, `&lt;`, `&gt;` (Slack's three control characters). */
export const escapeMrkdwn = (s: string): string => s.replace(/[&<>]/g, (ch) => ENTITIES[ch]!);

/**
 * Escaped and at most `max` characters long once escaped (Slack's limits count the escaped text),
 * cut between characters, never inside an entity; a cut text ends with "…".
 */
export function clipMrkdwn(s: string, max: number): string {
  const escaped = escapeMrkdwn(s);
  if (escaped.length <= max) return escaped;
  let out = '';
  for (const ch of s) {
    const piece = ENTITIES[ch] ?? ch;
    if (out.length + piece.length > max - 1) break;
    out += piece;
  }
  return `${out}…`;
}
