"""A small MCP server written with the official Python SDK whose every call
leaves a line in the file named by the LEDGER environment variable, before
it does anything else: a test reads the file to know exactly which calls
reached the server, and that a refused call never did."""

import os

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("ledger")


def journal(line: str) -> None:
    with open(os.environ["LEDGER"], "a", encoding="utf-8") as ledger:
        ledger.write(line + "\n")


@server.tool(
    name="add-entry",
    description="Adds an entry to the household ledger.",
    annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False),
)
def add_entry(text: str, amount: int = 1) -> str:
    journal(f"add_entry:{text}:{amount}")
    return f"added {text} x{amount}"


@server.tool(
    name="count-entries",
    description="Counts the entries of the household ledger.",
    annotations=ToolAnnotations(readOnlyHint=True),
)
def count_entries() -> str:
    journal("count_entries")
    return "3 entries"


@server.tool(
    name="clear",
    description="Erases the whole household ledger.",
    annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True),
)
def clear() -> str:
    journal("clear")
    return "cleared"


if __name__ == "__main__":
    server.run()
