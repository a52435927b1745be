"""An MCP server over stdio that misbehaves on purpose, written on the bare
JSON-RPC wire (standard library only) so it can break the protocol: each
tool but `echo` answers with garbage, floods notifications, answers a
wrong id or a malformed result, or dies halfway through a line."""

import json
import os
import sys
import time

TOOLS = ["echo", "garbage", "flood", "flood_forever", "bad_result", "wrong_id", "crash"]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def raw(text):
    sys.stdout.buffer.write(text)
    sys.stdout.buffer.flush()


def call(request_id, name):
    if name == "echo":
        send({"jsonrpc": "2.0", "id": request_id,
              "result": {"content": [{"type": "text", "text": "still here"}], "isError": False}})
    elif name == "garbage":
        raw(b"this is not json\n")
        raw(b'{"jsonrpc": "2.0", "id": \n')
        raw(b"\xff\xfe\xc3\x28 not utf-8\n")
        raw(b"[1, 2, 3]\n")
    elif name == "flood":
        for step in range(5000):
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": "forged", "progress": step, "total": 5000}})
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "info", "data": "x" * 200}})
        send({"jsonrpc": "2.0", "id": request_id,
              "result": {"content": [{"type": "text", "text": "after the flood"}], "isError": False}})
    elif name == "flood_forever":
        step = 0
        while True:
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": request_id, "progress": step}})
            step += 1
    elif name == "bad_result":
        send({"jsonrpc": "2.0", "id": request_id, "result": {"content": "not a list", "isError": "maybe"}})
    elif name == "wrong_id":
        send({"jsonrpc": "2.0", "id": 987654321,
              "result": {"content": [{"type": "text", "text": "for someone else"}]}})
    elif name == "crash":
        raw(b'{"jsonrpc": "2.0", "id": ')
        os._exit(3)


def main():
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method = message.get("method")
        request_id = message.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": request_id, "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "misbehaving", "version": "0.0.1"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": [
                {"name": name, "description": f"Misbehaves: {name}.",
                 "inputSchema": {"type": "object", "properties": {}},
                 "annotations": {"readOnlyHint": True}}
                for name in TOOLS]}})
        elif method == "tools/call":
            call(request_id, message["params"]["name"])
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        elif request_id is not None:
            send({"jsonrpc": "2.0", "id": request_id,
                  "error": {"code": -32601, "message": f"no method {method}"}})


if __name__ == "__main__":
    main()
