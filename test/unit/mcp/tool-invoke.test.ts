// The one tool registry as `tools/list` shows it on each revision: the same schemas, the self-approval
// tool only with the flag, and the task hint only where the tasks extension is served (2026-07-28).
import { describe, expect, it } from 'vitest';
import { listedTool, visibleTools } from '../../../server/mcp/tool-invoke.ts';
import { GATEWAY_TOOLS, TOOL_NAMES } from '../../../server/mcp/tools.ts';

describe('the listed gateway tools', () => {
  it('hide gateway_approve_self unless self-approval is on', () => {
    expect(visibleTools(false).map((t) => t.name)).not.toContain(TOOL_NAMES.approveSelf);
    expect(visibleTools(true).map((t) => t.name)).toEqual(GATEWAY_TOOLS.map((t) => t.name));
  });

  it('tell only a 2026-07-28 caller that a call may become a task', () => {
    const call = GATEWAY_TOOLS.find((t) => t.name === TOOL_NAMES.call)!;
    const search = GATEWAY_TOOLS.find((t) => t.name === TOOL_NAMES.search)!;
    expect(listedTool(call, true).execution).toEqual({ taskSupport: 'optional' });
    expect(listedTool(search, true).execution).toBeUndefined();
    expect(listedTool(call, false).execution).toBeUndefined();
  });

  it('publish the strict input schema that validates the call, and the output schema', () => {
    const call = listedTool(GATEWAY_TOOLS.find((t) => t.name === TOOL_NAMES.call)!, false);
    expect(call.inputSchema).toMatchObject({ type: 'object', additionalProperties: false, $schema: 'https://json-schema.org/draft/2020-12/schema' });
    expect(Object.keys(call.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['service', 'action', 'approval_id']));
    expect(call.outputSchema?.type).toBe('object');
    expect(call.annotations).toMatchObject({ destructiveHint: true, openWorldHint: true });
  });
});
