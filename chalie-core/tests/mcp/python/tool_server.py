"""A small MCP server written with the official Python SDK, for chalie to
consume over stdio: a read, a write, two names that collide once mapped to
snake_case, a tool that raises, a slow one, one that never returns, and one
that reports its process id so a test can kill it mid-call."""

import os

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

READ = ToolAnnotations(readOnlyHint=True)
server = MCPServer("py-tools")
CALL_LOG = os.environ.get("TOOL_SERVER_CALL_LOG")


def log_call(name: str, *arguments: object) -> None:
    if CALL_LOG:
        with open(CALL_LOG, "a", encoding="utf-8") as log:
            log.write(" ".join([name, *map(str, arguments)]) + "\n")


@server.tool(name="get-forecast", description="Weather forecast for a city, some days ahead.", annotations=READ)
def get_forecast(city: str, days: int = 1) -> str:
    log_call("get-forecast", city, days)
    return f"{city}: sunny for {days} day(s)"


@server.tool(name="get.forecast", description="Legacy alias of the forecast tool.", annotations=READ)
def get_forecast_legacy(city: str) -> str:
    log_call("get.forecast", city)
    return f"{city}: sunny (legacy)"


@server.tool(
    name="delete.file",
    description="Deletes a file from the shared drive.",
    annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True),
)
def delete_file(path: str) -> str:
    log_call("delete.file", path)
    return f"deleted {path}"


@server.tool(name="explode", description="Always fails with an exception.", annotations=READ)
def explode() -> str:
    raise RuntimeError("the forecast service is on fire")


@server.tool(name="slow", description="Sleeps, then answers.", annotations=READ)
async def slow(seconds: float) -> str:
    await anyio.sleep(seconds)
    return "finally"


@server.tool(name="hang", description="Never answers.", annotations=READ)
async def hang() -> str:
    await anyio.sleep(3600)
    return "unreachable"


@server.tool(name="pid", description="This server's process id.", annotations=READ)
def pid() -> str:
    return str(os.getpid())


if __name__ == "__main__":
    server.run()
