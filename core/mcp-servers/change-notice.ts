// The notice telling an org's admins that a connected MCP server's tools changed (issue 43): the
// server, the tool names added, removed and changed (each list capped), and where to review them.
// Names only: no descriptions or schemas, which the upstream writes and the dashboard shows. Pure.
import { clipMrkdwn } from '../notifications/slack-mrkdwn.ts';

export type ToolChangeEvent = 'mcp_server.tool_added' | 'mcp_server.tool_removed' | 'mcp_server.tool_changed';

export interface ToolChangeNotice {
  service: string;
  changes: readonly { event: ToolChangeEvent; tool: string }[];
  /** The dashboard page where an admin enables, accepts or reviews the tools. */
  reviewUrl: string;
}

/** Names listed per kind of change; the rest are counted ("and 3 more"). */
export const NAMES_SHOWN = 10;
/** An upstream's tool name is its own text: long ones are cut. */
const NAME_MAX = 80;

const LINES: readonly [ToolChangeEvent, string][] = [
  ['mcp_server.tool_added', 'New (disabled until enabled)'],
  ['mcp_server.tool_removed', 'Removed (disabled)'],
  ['mcp_server.tool_changed', 'Changed (refused until accepted)'],
];

/** One line, no control characters, at most `max` characters. */
function plain(s: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const line = s.replace(/[\u0000-\u001f\u007f]+/g, ' ');
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

/** "a, b, c and 2 more" of the names given, each made one short line by `show`. */
function nameList(names: readonly string[], show: (name: string) => string): string {
  const shown = names.slice(0, NAMES_SHOWN).map(show).join(', ');
  return names.length > NAMES_SHOWN ? `${shown} and ${names.length - NAMES_SHOWN} more` : shown;
}

function grouped(n: ToolChangeNotice): [string, string[]][] {
  return LINES.map(([event, label]): [string, string[]] => [label, [...new Set(n.changes.filter((c) => c.event === event).map((c) => c.tool))]]).filter(([, names]) => names.length > 0);
}

/** The email: one subject line and a plain-text body. */
export function toolChangeEmail(n: ToolChangeNotice): { subject: string; text: string } {
  const service = plain(n.service, NAME_MAX);
  return {
    subject: `Tools changed on the MCP server ${service}`,
    text: [
      `The MCP server ${service} changed its tools:`,
      '',
      ...grouped(n).map(([label, names]) => `${label}: ${nameList(names, (t) => plain(t, NAME_MAX))}`),
      '',
      `Review them: ${n.reviewUrl}`,
    ].join('\n'),
  };
}

/** Escaped names are cut shorter in Slack so the whole text fits one section block (3000). */
const SLACK_NAME_MAX = 60;

/** The Slack message's text (mrkdwn; every upstream-written name escaped). */
export function toolChangeSlackText(n: ToolChangeNotice): string {
  const lines = grouped(n).map(([label, names]) => `• ${label}: ${nameList(names, (t) => clipMrkdwn(plain(t, NAME_MAX), SLACK_NAME_MAX))}`);
  return [`The MCP server *${clipMrkdwn(plain(n.service, NAME_MAX), SLACK_NAME_MAX)}* changed its tools:`, ...lines, `<${n.reviewUrl}|Review them>`].join('\n');
}

/** The message's one block: its text as a section. */
export const toolChangeSlackBlocks = (text: string): unknown[] => [{ type: 'section', text: { type: 'mrkdwn', text } }];
