"""Drives a chalie MCP server with the official Python SDK client and
writes what it saw to a JSON report for the Rust test to check.

Usage: client_drive.py --mode full|on_demand (--stdio | --url URL) --report PATH [--external]

With --stdio the client talks MCP on its own stdin/stdout (the test serves
chalie on the other end of the pipes)."""

import argparse
import json
import os
import sys

import anyio
from mcp import ClientSession, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server


def text_of(result):
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def outcome(result):
    return {
        "is_error": bool(result.is_error),
        "text": text_of(result),
        "structured": result.structured_content,
    }


def envelope_json(text):
    # `[tool(status=success)]\n{json}\n[end:tool]`
    body = text.split("\n", 1)[1].rsplit("\n", 1)[0]
    return json.loads(body)


async def scenario(session, mode, external):
    report = {}
    init = await session.initialize()
    report["server"] = init.server_info.name
    listed = await session.list_tools()
    report["tools"] = [
        {
            "name": tool.name,
            "read_only": tool.annotations.read_only_hint if tool.annotations else None,
            "destructive": tool.annotations.destructive_hint if tool.annotations else None,
            "has_output_schema": tool.output_schema is not None,
        }
        for tool in listed.tools
    ]

    async def invoke(name, arguments):
        if mode == "on_demand":
            return await session.call_tool("call_tool", {"name": name, "arguments": arguments})
        return await session.call_tool(name, arguments)

    found = await session.call_tool("find_tools", {"query": "order forecast"})
    tools = envelope_json(text_of(found))["tools"]
    report["found"] = {tool["name"]: tool["parameters"] for tool in tools}

    # Call what find_tools returned, with arguments built from its schema.
    lookup = report["found"]["lookup_order"]
    assert lookup["required"] == ["order_id"], lookup
    report["call"] = outcome(await invoke("lookup_order", {"order_id": "A-1"}))
    report["error"] = outcome(await invoke("lookup_order", {"order_id": "Z-9"}))
    report["denied"] = outcome(await invoke("cancel_order", {"order_id": "A-1"}))
    if external:
        report["external"] = outcome(await invoke("py__get_forecast", {"city": "Rome", "days": 2}))

    try:
        await session.call_tool("no_such_tool", {})
        report["misuse"] = None
    except MCPError as error:
        report["misuse"] = {"code": error.error.code, "message": error.error.message}

    again = await session.list_tools()
    report["list_stable"] = [tool.name for tool in again.tools] == [tool.name for tool in listed.tools]
    return report


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", required=True, choices=["full", "on_demand"])
    parser.add_argument("--url")
    parser.add_argument("--stdio", action="store_true")
    parser.add_argument("--report", required=True)
    parser.add_argument("--external", action="store_true")
    args = parser.parse_args()

    if args.stdio:
        async with stdio_server() as (read, write):
            async with ClientSession(read, write) as session:
                write_report(args.report, await scenario(session, args.mode, args.external))
                # stdio_server's reader thread waits for our stdin to close,
                # and the server on the other end waits for us to go: end here.
                os._exit(0)
    else:
        async with streamable_http_client(args.url) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                write_report(args.report, await scenario(session, args.mode, args.external))


def write_report(path, report):
    with open(path, "w", encoding="utf-8") as out:
        json.dump(report, out, indent=2)


if __name__ == "__main__":
    try:
        anyio.run(main)
    except Exception as error:  # a failed step fails the Rust test with this message
        print(f"client_drive.py failed: {error!r}", file=sys.stderr)
        raise
