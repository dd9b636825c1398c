"""The official Python MCP SDK (mcp 2.3) as a 2026-07-28 client that answers URL elicitations: it
calls gateway_call once, answers every URL elicitation with the given action and lets the SDK's own
multi round-trip driver retry. One JSON line per step on stdout, for mcp-2026.test.ts to judge (the
test resolves the approval while the call is held).

usage: python mcp_sdk_2026_elicit.py <mcp url> <bearer token> <service> <item name> <accept|decline|cancel>
"""
import asyncio
import json
import sys
import time

from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def emit(step, **fields):
    print(json.dumps({"step": step, **fields}), flush=True)


async def main(url, token, service, item, action):
    started = time.monotonic()
    elicitations = 0

    async def on_elicit(context, params):
        nonlocal elicitations
        elicitations += 1
        emit("elicited", mode=params.mode, url=getattr(params, "url", None), elicitation_id=getattr(params, "elicitation_id", None))
        return types.ElicitResult(action=action)

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    transport = streamable_http_client(url, http_client=http, terminate_on_close=False)
    async with Client(transport, cache=None, elicitation_callback=on_elicit) as client:
        try:
            result = await client.call_tool("gateway_call", {"service": service, "action": "create_item", "params": {"name": item}})
        except Exception as err:  # the defect: the SDK gives up after its 10 rounds and throws
            emit("failed", error=f"{type(err).__name__}: {err}", elicitations=elicitations, seconds=time.monotonic() - started)
            return
        texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
        emit("result", is_error=bool(result.is_error), structured=result.structured_content, texts=texts, elicitations=elicitations, seconds=time.monotonic() - started)


asyncio.run(main(*sys.argv[1:6]))
