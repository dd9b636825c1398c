import { describe, expect, it } from 'vitest';
import { serviceDocument, type ToolRecord } from '../../../core/mcp-servers/definition.ts';
import { actionKeyFor, keyTools, pinDiff, pinHash, pinOf, riskFromAnnotations, toolSummary } from '../../../core/mcp-servers/tools.ts';
import { loadServiceDocument } from '../../../server/registry/loader.ts';

describe('an MCP tool as an action', () => {
  it('takes risk from the annotations with the specification’s defaults', () => {
    expect(riskFromAnnotations(undefined)).toBe('delete');
    expect(riskFromAnnotations({})).toBe('delete');
    expect(riskFromAnnotations({ readOnlyHint: true })).toBe('read');
    expect(riskFromAnnotations({ readOnlyHint: true, destructiveHint: true })).toBe('read');
    expect(riskFromAnnotations({ destructiveHint: false })).toBe('write');
    expect(riskFromAnnotations({ readOnlyHint: false, destructiveHint: true })).toBe('delete');
  });

  it('makes names action keys and refuses names that collide once normalised', () => {
    expect(actionKeyFor('get-sum')).toBe('get-sum');
    expect(actionKeyFor('files/read')).toBe('files_read');
    expect(actionKeyFor('2fa')).toBe('t_2fa');
    const tool = (name: string) => ({ name, inputSchema: { type: 'object' } });
    expect(keyTools([tool('a/b'), tool('c')])).toMatchObject({ ok: true, tools: [{ key: 'a_b' }, { key: 'c' }] });
    expect(keyTools([tool('a/b'), tool('A_b'), tool('c')])).toEqual({ ok: false, collisions: [{ key: 'a_b', tools: ['a/b', 'A_b'] }] });
  });

  it('pins description, schema and annotations whatever the key order, and names what changed', () => {
    const a = pinOf({ name: 't', description: 'd', inputSchema: { type: 'object', properties: { x: { type: 'string' } } }, annotations: { readOnlyHint: true } });
    const reordered = pinOf({ name: 't', annotations: { readOnlyHint: true }, inputSchema: { properties: { x: { type: 'string' } }, type: 'object' }, description: 'd' });
    expect(pinHash(a)).toBe(pinHash(reordered));
    const b = { ...a, annotations: { readOnlyHint: false } };
    expect(pinHash(b)).not.toBe(pinHash(a));
    expect(pinDiff(a, b)).toEqual({ annotations: { pinned: { readOnlyHint: true }, current: { readOnlyHint: false } } });
  });

  it('keeps summary-template syntax out of the summary', () => {
    expect(toolSummary({ name: 't', description: 'Send {text} to [room]. More.', inputSchema: {} })).toBe('Send (text) to (room).');
    expect(toolSummary({ name: 't', title: 'Title', description: 'x', inputSchema: {} })).toBe('Title');
  });

  it('generates a document the registry loads: disabled tools, overrides and pins as extensions', async () => {
    const pinned = pinOf({ name: 'files/read', description: 'Read a file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } }, annotations: { readOnlyHint: true } });
    const record = (over: Partial<ToolRecord>): ToolRecord => ({ name: 'files/read', key: 'files_read', summary: 'Read a file', pinned, annotationRisk: 'read', status: 'active', override: {}, ...over });
    const doc = serviceDocument({ name: 'fs', url: 'http://127.0.0.1:9/mcp', auth: { type: 'header', header_name: 'X-Key', secret_name: 'FS_KEY' }, timeoutMs: 2500 }, [
      record({ override: { risk: 'write', scope_param: 'path' } }),
      record({ name: 'other', key: 'other', status: 'new' }),
    ]);
    const loaded = await loadServiceDocument(doc, 'test');
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    const read = loaded.service.actions.get('files_read')!;
    expect(read).toMatchObject({ tool: 'files/read', risk: 'write', scopeParam: 'path', disabled: false, toolPin: { hash: pinHash(pinned), description: 'Read a file' } });
    expect(loaded.service.actions.get('other')!.disabled).toBe(true);
    expect(loaded.service.authMethods).toMatchObject([{ type: 'apiKey', in: 'header', paramName: 'X-Key', defaultSecretName: 'FS_KEY' }]);
    expect(loaded.service.mcp).toEqual({ url: 'http://127.0.0.1:9/mcp', timeoutMs: 2500 });
  });

  it('an OAuth upstream is an oauth2 scheme of its connections provider', async () => {
    const auth = { type: 'oauth' as const, provider: 'mcp-0123456789abcdef01234567', authorization_url: 'http://127.0.0.1:9/authorize', token_url: 'http://127.0.0.1:9/token', scopes: ['mcp'] };
    const loaded = await loadServiceDocument(serviceDocument({ name: 'peer', url: 'http://127.0.0.1:9/mcp', auth, timeoutMs: null }, []), 'test');
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    expect(loaded.service.authMethods).toEqual([{ type: 'oauth2', name: 'upstream', provider: auth.provider, authorizationUrl: auth.authorization_url, tokenUrl: auth.token_url, scopes: ['mcp'] }]);
    expect(loaded.service.mcp).toEqual({ url: 'http://127.0.0.1:9/mcp' });
  });

  it('refuses an mcp timeout_ms outside 100..600000', async () => {
    const doc = serviceDocument({ name: 'fs', url: 'http://127.0.0.1:9/mcp', auth: { type: 'none' }, timeoutMs: 50 }, []);
    const bad = await loadServiceDocument(doc, 'test');
    expect(bad.ok ? [] : bad.problems.map((p) => [p.code, p.path])).toEqual([['invalid_mcp', '/x-gateway-mcp/timeout_ms']]);
  });

  it('refuses a tool_pin outside runtime mcp or of the wrong shape', async () => {
    const pinned = pinOf({ name: 't', inputSchema: { type: 'object' } });
    const doc = serviceDocument({ name: 'fs', url: 'http://127.0.0.1:9/mcp', auth: { type: 'none' }, timeoutMs: null }, [
      { name: 't', key: 't', summary: 'T', pinned, annotationRisk: 'delete', status: 'active', override: {} },
    ]) as any;
    doc.paths['/tools/t'].post['x-gateway-tool_pin'] = { hash: 1 };
    const bad = await loadServiceDocument(doc, 'test');
    expect(bad.ok ? [] : bad.problems.map((p) => p.code)).toEqual(['invalid_mcp']);
  });
});
