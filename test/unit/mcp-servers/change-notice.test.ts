import { describe, expect, it } from 'vitest';
import { NAMES_SHOWN, toolChangeEmail, toolChangeSlackText, type ToolChangeNotice } from '../../../core/mcp-servers/change-notice.ts';

const reviewUrl = 'https://gateway.example.test/services/mcp-servers/7b0c';

describe('the notice of an MCP server’s tool changes', () => {
  it('names the server, each kind of change and the review page; kinds with no tool are left out', () => {
    const n: ToolChangeNotice = { service: 'deployer', reviewUrl, changes: [{ event: 'mcp_server.tool_changed', tool: 'deploy' }, { event: 'mcp_server.tool_added', tool: 'rollback' }] };
    expect(toolChangeEmail(n)).toEqual({
      subject: 'Tools changed on the MCP server deployer',
      text: ['The MCP server deployer changed its tools:', '', 'New (disabled until enabled): rollback', 'Changed (refused until accepted): deploy', '', `Review them: ${reviewUrl}`].join('\n'),
    });
    expect(toolChangeSlackText(n)).toBe(
      ['The MCP server *deployer* changed its tools:', '• New (disabled until enabled): rollback', '• Changed (refused until accepted): deploy', `<${reviewUrl}|Review them>`].join('\n'),
    );
  });

  it('caps each list and counts the rest', () => {
    const changes = Array.from({ length: NAMES_SHOWN + 3 }, (_, i) => ({ event: 'mcp_server.tool_removed' as const, tool: `t${i}` }));
    const { text } = toolChangeEmail({ service: 's', reviewUrl, changes });
    expect(text).toContain(`Removed (disabled): ${changes.slice(0, NAMES_SHOWN).map((c) => c.tool).join(', ')} and 3 more`);
    expect(text).not.toContain(`t${NAMES_SHOWN}`);
  });

  it('keeps upstream-written names to one short line, escaped for Slack (no mention, no link)', () => {
    const n: ToolChangeNotice = { service: 'evil\r\nBcc: x@example.test', reviewUrl, changes: [{ event: 'mcp_server.tool_added', tool: `<!channel> <https://x.test|y>${'a'.repeat(500)}` }] };
    const email = toolChangeEmail(n);
    expect(email.subject).not.toMatch(/[\r\n]/);
    expect(email.text.split('\n')[2]!.length).toBeLessThan(150);
    const slack = toolChangeSlackText(n);
    expect(slack).toContain('&lt;!channel&gt; &lt;https://x.test|y&gt;');
    expect(slack).not.toContain('<!channel>');
    expect(slack.length).toBeLessThan(3000);
  });
});
