"""A Python SDK client following a Waymark workflow: `subscriptions/listen` (protocol 2026-07-28).

Prints one JSON line per step: {"ready": ...} once the subscription is acknowledged, one
{"event": ..., "uri": ...} per change event, then {"ended": "graceful"|"lost"} when the server
ends the stream (e.g. its credential was revoked).
Usage: python follow.py <mcp url> <bearer token> <workflow resource uri>
"""

import asyncio
import json
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import SubscriptionLost
from mcp.shared._httpx_utils import create_mcp_http_client


def say(value):
    print(json.dumps(value), flush=True)


async def main():
    url, token, uri = sys.argv[1], sys.argv[2], sys.argv[3]
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        async with client.listen(resource_subscriptions=[uri]) as subscription:
            say({"ready": True, "protocol": getattr(client.session, "protocol_version", None), "honored": list(subscription.honored.resource_subscriptions or [])})
            try:
                async for event in subscription:
                    say({"event": type(event).__name__, "uri": getattr(event, "uri", None)})
            except SubscriptionLost:
                say({"ended": "lost"})
                return
    say({"ended": "graceful"})


asyncio.run(main())
