"""The official Python MCP SDK (mcp 2.3) against the gateway, as a 2026-07-28 client: one JSON
line per step on stdout, for test/integration/mcp-2026.test.ts to judge.

usage: python mcp_sdk_2026.py <mcp url> <bearer token> <service> <item name>
"""
import asyncio
import json
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def emit(step, **fields):
    print(json.dumps({"step": step, **fields}), flush=True)


async def main(url, token, service, item):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    transport = streamable_http_client(url, http_client=http, terminate_on_close=False)
    # No tasks extension: the SDK has no client side for it (a task result needs a claim), so the
    # call comes back as today's pending_approval, over the 2026-07-28 wire.
    async with Client(transport, cache=None) as client:
        emit("connected", protocol_version=client.protocol_version, server=client.server_info.name if client.server_info else None)
        tools = await client.list_tools()
        emit("tools", names=[t.name for t in tools.tools])
        whoami = await client.call_tool("gateway_auth", {"operation": "whoami"})
        emit("whoami", is_error=bool(whoami.is_error), structured=whoami.structured_content)
        pending = await client.call_tool("gateway_call", {"service": service, "action": "create_item", "params": {"name": item}})
        emit("call", is_error=bool(pending.is_error), structured=pending.structured_content)


asyncio.run(main(*sys.argv[1:5]))
