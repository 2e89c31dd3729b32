#!/usr/bin/env python3
"""One prompt turn of an ACP agent, by hand: the baseline bench/clis.sh
times orch against. Standard library only.

    acp_once.py AGENT [ARG...] < PROMPT

Starts the agent in its own process group, sends initialize, session/new
(the current directory as cwd) and session/prompt with PROMPT; answers
every permission request with its allow_once option, serves
fs/read_text_file and fs/write_text_file in the current directory (a
missing file is ACP's -32002); when the turn ends, closes the agent's
stdin and ends its process group at once. Exits 0 if the turn ended with
end_turn, 1 otherwise.
"""
import json
import os
import signal
import subprocess
import sys


def main(argv):
    prompt = sys.stdin.read()
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
    ids = iter(range(1, 1 << 30))

    def send(msg):
        msg["jsonrpc"] = "2.0"
        p.stdin.write((json.dumps(msg) + "\n").encode())
        p.stdin.flush()

    def call(method, params):
        i = next(ids)
        send({"id": i, "method": method, "params": params})
        while True:
            line = p.stdout.readline()
            if not line:
                raise SystemExit("acp_once: the agent ended before answering " + method)
            m = json.loads(line)
            if m.get("id") == i and "method" not in m:
                if "error" in m:
                    raise SystemExit("acp_once: %s: %s" % (method, m["error"]))
                return m["result"]
            if "method" in m and "id" in m:
                serve(m)

    def serve(m):
        params = m.get("params", {})
        result, error = None, None
        if m["method"] == "session/request_permission":
            allow = [o for o in params.get("options", []) if o.get("kind") == "allow_once"]
            outcome = {"outcome": "selected", "optionId": allow[0]["optionId"]} if allow else {"outcome": "cancelled"}
            result = {"outcome": outcome}
        elif m["method"] == "fs/read_text_file":
            try:
                with open(params["path"]) as f:
                    result = {"content": f.read()}
            except FileNotFoundError:
                error = {"code": -32002, "message": "Resource not found: " + params["path"]}
        elif m["method"] == "fs/write_text_file":
            with open(params["path"], "w") as f:
                f.write(params["content"])
        else:
            error = {"code": -32601, "message": "method not found: " + m["method"]}
        reply = {"id": m["id"]}
        if error:
            reply["error"] = error
        else:
            reply["result"] = result
        send(reply)

    try:
        call("initialize", {"protocolVersion": 1,
                            "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": False}})
        session = call("session/new", {"cwd": os.getcwd(), "mcpServers": []})["sessionId"]
        end = call("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": prompt}]})
    finally:
        p.stdin.close()
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        p.wait()
    return 0 if end.get("stopReason") == "end_turn" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
