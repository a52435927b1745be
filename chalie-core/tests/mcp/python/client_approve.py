"""Calls a write left at `ask` on a chalie MCP server with the official
Python SDK client on protocol 2026-07-28, whose user answers the approval
question the server sends (an input-required result), and writes what it
saw to a JSON report for the Rust test to check.

Usage: client_approve.py --url URL --order ID (--approve | --refuse | --no-elicitation) --report PATH"""

import argparse
import json
import sys

import anyio
import mcp_types as types
from mcp.client.client import Client


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--order", required=True)
    parser.add_argument("--report", required=True)
    answer = parser.add_mutually_exclusive_group(required=True)
    answer.add_argument("--approve", action="store_true")
    answer.add_argument("--refuse", action="store_true")
    answer.add_argument("--no-elicitation", action="store_true")
    args = parser.parse_args()

    asked = []

    async def user(context, params):
        asked.append({"message": params.message, "schema": params.requested_schema})
        return types.ElicitResult(action="accept", content={"approve": bool(args.approve)})

    callback = None if args.no_elicitation else user
    async with Client(args.url, mode="2026-07-28", elicitation_callback=callback) as client:
        result = await client.call_tool("cancel_order", {"order_id": args.order})
        text = "".join(block.text for block in result.content if getattr(block, "type", "") == "text")
        report = {"is_error": bool(result.is_error), "text": text, "asked": asked}
    with open(args.report, "w", encoding="utf-8") as out:
        json.dump(report, out, indent=2, default=str)


if __name__ == "__main__":
    try:
        anyio.run(main)
    except Exception as error:  # a failed step fails the Rust test with this message
        print(f"client_approve.py failed: {error!r}", file=sys.stderr)
        raise
