"""Typed MCP clients in Python against Waymark: which result fields do they let an agent see?

The Python SDK validates structuredContent against each tool's outputSchema; fastmcp builds a
typed object from it and drops fields the schema does not declare. Prints one JSON line.
Usage: python typed_results.py <mcp url> <bearer token>
"""

import asyncio
import json
import sys

from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def fields(data):
    """The field names a typed result exposes (dataclass-like object or dict)."""
    if data is None:
        return []
    if isinstance(data, dict):
        return sorted(k for k, v in data.items() if v is not None)
    names = getattr(data, "__dataclass_fields__", None) or getattr(data, "model_fields", None) or vars(data)
    return sorted(n for n in names if getattr(data, n, None) is not None)


async def with_fastmcp(url, token):
    transport = StreamableHttpTransport(url, headers={"Authorization": f"Bearer {token}"})
    async with Client(transport) as client:
        first = await client.call_tool("start_workflow", {"name": "Typed clients"})
        again = await client.call_tool("start_workflow", {"name": "typed CLIENTS"})
        task = await client.call_tool("start_task", {"workflow_id": first.data.workflow_id, "name": "t", "goal": "g"})
        last = None
        for i in range(6):
            last = await client.call_tool("log_milestone", {"task_id": task.data.task_id, "message": f"m{i}"})
        return {
            "start_workflow_resumed": fields(again.data),
            "resumed": getattr(again.data, "resumed", None),
            "start_task": fields(task.data),
            "log_milestone": fields(last.data),
            "warnings": getattr(last.data, "warnings", None),
        }


async def with_sdk(url, token):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http, streamable_http_client(url, http_client=http) as (read, write, *_):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("get_workflow", {})
            listed = await session.list_tools()
            # What the client holds after tools/list, as compact JSON: the bytes an agent's context pays.
            tools = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed.tools]
            prompts = await session.list_prompts()
            instructions = await session.get_prompt("instructions")
            resume = await session.get_prompt("resume")
            return {
                "prompts": [prompt.name for prompt in prompts.prompts],
                "instructions": instructions.messages[0].content.text,
                "resume": resume.messages[0].content.text,
                "get_workflow_error": result.is_error,
                "get_workflow": sorted((result.structured_content or {}).keys()),
                "tools_list_bytes": len(json.dumps(tools, separators=(",", ":"), ensure_ascii=False).encode()),
                "tools_listed": len(tools),
            }


async def main():
    url, token = sys.argv[1], sys.argv[2]
    out = await with_fastmcp(url, token)
    out.update(await with_sdk(url, token))
    print(json.dumps(out, default=str))


asyncio.run(main())
