#!/usr/bin/env python3
"""A stand-in coding agent that speaks the Agent Client Protocol (ACP):
JSON-RPC 2.0, one message per line, on stdin and stdout. Python 3 standard
library only, offline, deterministic: it plays the planner, an implementer
or the reviewer of examples/coding, by the first line of its prompt.

What it uses of ACP, as a real agent (gemini --acp) would:
  initialize, session/new (the cwd is the attempt's worktree),
  session/prompt, answered after session/update notifications
  (agent_message_chunk, plan, tool_call, usage_update), then a stopReason;
  it calls session/request_permission before an edit, and
  fs/read_text_file / fs/write_text_file inside its cwd; session/cancel.

  planner      writes PLAN.md, ends with {"code_file": ..., "test_file": ...}
  implementer  reads PLAN.md, writes the file its prompt names
               ("Write the file NAME"), ends with {"summary": ...}
  reviewer     reads PLAN.md and the files its prompt names (backticked) in
               the merged tree, ends with {"verdict": ...}

With orch's MCP server (session/new's mcpServers, over HTTP: it advertises
mcpCapabilities.http), the implementers post what they changed on the board
(changes/FILE), and the reviewer reads those posts and asks the person when
it is unsure (a file the plan names is missing).
Logs go to stderr.
"""
import json
import os
import re
import sys
import threading
import urllib.request

out_lock = threading.Lock()
state_lock = threading.Lock()
waiting = {}  # our request id -> [threading.Event, response]
sessions = {}  # session id -> {"cwd": ..., "cancelled": bool}
counter = [0]


def send(msg):
    msg["jsonrpc"] = "2.0"
    with out_lock:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()


def call(method, params):
    """Sends a request to orch and waits for its response."""
    with state_lock:
        counter[0] += 1
        rid = counter[0]
        slot = [threading.Event(), None]
        waiting[rid] = slot
    send({"id": rid, "method": method, "params": params})
    slot[0].wait()
    return slot[1]


class MCP:
    """The least MCP client a tool call needs (streamable HTTP, standard library)."""

    def __init__(self, server):
        self.url = server["url"]
        self.headers = {h["name"]: h["value"] for h in server.get("headers", [])}
        self.session, self.next = None, 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "fake_coder", "version": "1"}})
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, msg):
        headers = dict(self.headers, **{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
        if self.session:
            headers.update({"Mcp-Session-Id": self.session, "Mcp-Protocol-Version": "2025-06-18"})
        req = urllib.request.Request(self.url, json.dumps(msg).encode(), headers)
        with urllib.request.urlopen(req, timeout=600) as resp:
            self.session = resp.headers.get("Mcp-Session-Id") or self.session
            if "id" not in msg:
                return None
            if resp.headers.get("Content-Type", "").startswith("text/event-stream"):
                for line in resp:  # progress notifications come before the answer
                    line = line.decode().strip()
                    if line.startswith("data: "):
                        data = json.loads(line[6:])
                        if data.get("id") == msg["id"]:
                            return data
                return None
            return json.load(resp)

    def request(self, method, params):
        self.next += 1
        return self.post({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params})

    def tool(self, name, args):
        """A tool's structured result, or None (its error said on stderr)."""
        res = (self.request("tools/call", {"name": name, "arguments": args}) or {}).get("result", {})
        if res.get("isError"):
            print("mcp %s: %s" % (name, res.get("content")), file=sys.stderr)
            return None
        return res.get("structuredContent")


def orch(sid):
    """orch's MCP server of the session, or None."""
    for server in sessions[sid].get("mcp", []):
        if server.get("name") == "orch" and server.get("type") == "http":
            try:
                return MCP(server)
            except OSError as e:
                print("mcp: %s" % e, file=sys.stderr)
    return None


def update(sid, **u):
    send({"method": "session/update", "params": {"sessionId": sid, "update": u}})


def say(sid, text):
    update(sid, sessionUpdate="agent_message_chunk", content={"type": "text", "text": text})


def read(sid, name):
    """A file of the workspace, or None (with orch's error said)."""
    resp = call("fs/read_text_file", {"sessionId": sid, "path": os.path.join(sessions[sid]["cwd"], name)})
    if "error" in resp:
        say(sid, "(cannot read %s: %s)\n" % (name, resp["error"].get("message")))
        return None
    return resp["result"]["content"]


def write(sid, name, content):
    """Asks permission to edit, then writes name in the workspace."""
    tool = "edit-%s" % name
    update(sid, sessionUpdate="tool_call", toolCallId=tool, title="Write " + name, kind="edit", status="pending")
    resp = call("session/request_permission", {
        "sessionId": sid,
        "toolCall": {"toolCallId": tool, "title": "Write " + name, "kind": "edit"},
        "options": [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ]})
    outcome = resp.get("result", {}).get("outcome", {})
    if outcome.get("optionId") not in ("allow", "always"):
        update(sid, sessionUpdate="tool_call_update", toolCallId=tool, status="failed")
        say(sid, "Not allowed to write %s.\n" % name)
        return False
    resp = call("fs/write_text_file", {"sessionId": sid, "path": os.path.join(sessions[sid]["cwd"], name), "content": content})
    ok = "error" not in resp
    update(sid, sessionUpdate="tool_call_update", toolCallId=tool, status="completed" if ok else "failed")
    return ok


CODE = '''import re


def slugify(title):
    """A URL slug: lower case, words joined by hyphens."""
    return "-".join(re.findall(r"[a-z0-9]+", title.lower()))
'''

TESTS = '''import unittest

from slug import slugify


class SlugifyTest(unittest.TestCase):
    def test_words(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")

    def test_empty(self):
        self.assertEqual(slugify("  "), "")


if __name__ == "__main__":
    unittest.main()
'''


def plan(sid, prompt):
    feature = re.search(r'"([^"]+)"', prompt)
    feature = feature.group(1) if feature else "the feature"
    steps = ["slug.py: implement slugify", "test_slug.py: unit tests for slugify"]
    update(sid, sessionUpdate="plan", entries=[{"content": s, "priority": "high", "status": "pending"} for s in steps])
    say(sid, "Plan for %s:\n" % feature)
    for s in steps:
        say(sid, "- %s\n" % s)
    write(sid, "PLAN.md", "# Plan: %s\n\n%s\n" % (feature, "\n".join("1. " + s for s in steps)))
    return {"code_file": "slug.py", "test_file": "test_slug.py"}


def implement(sid, prompt):
    m = re.search(r"[Ww]rite the file\s+`?([\w/.-]*\w)", prompt)
    if not m:
        say(sid, "The prompt names no file to write.\n")
        return {"summary": "nothing written"}
    name = m.group(1)
    if read(sid, "PLAN.md") is not None:
        say(sid, "Read PLAN.md.\n")
    content = {"slug.py": CODE, "test_slug.py": TESTS}.get(name, "# %s\n" % name)
    written = write(sid, name, content)
    if written:
        say(sid, "Wrote %s (%d lines).\n" % (name, content.count("\n")))
        tools = orch(sid)
        if tools and tools.tool("blackboard_write", {"key": "changes/" + name, "value": {"file": name, "lines": content.count("\n")}}):
            say(sid, "Posted changes/%s on the board.\n" % name)
    return {"summary": ("wrote %s" if written else "could not write %s") % name}


def review(sid, prompt):
    names = ["PLAN.md"] + [n for n in re.findall(r"`([\w./-]+)`", prompt) if n != "PLAN.md"]
    found = {}
    for name in names:
        text = read(sid, name)
        if text is not None:
            found[name] = text
            say(sid, "Read %s: %d lines.\n" % (name, text.count("\n")))
    good = "def slugify" in found.get("slug.py", "") and "class SlugifyTest" in found.get("test_slug.py", "")
    missing = [n for n in names if n not in found]
    tools = orch(sid)
    if tools:
        posts = (tools.tool("blackboard_list", {"prefix": "changes/"}) or {}).get("keys", [])
        for post in posts:
            change = (tools.tool("blackboard_read", {"key": post["key"]}) or {}).get("value", {})
            say(sid, "%s by %s: %s, %s lines.\n" % (post["key"], post["author"], change.get("file"), change.get("lines")))
    if missing:
        say(sid, "Missing from the merged tree: %s.\n" % ", ".join(missing))
        if tools:  # unsure: the person decides
            answer = tools.tool("ask", {"question": "%s missing from the merged tree: request changes?" % ", ".join(missing),
                                        "options": ["request changes", "approve anyway"]})
            if answer and answer.get("answer") == "approve anyway":
                good = True
    say(sid, "slugify and its tests are there, as planned.\n" if good else "slugify or its tests are missing.\n")
    return {"verdict": "approve" if good else "changes requested"}


def turn(rid, sid, prompt):
    roles = {"planner": plan, "implementer": implement, "reviewer": review}
    first = prompt.strip().split("\n", 1)[0].lower()
    role = next((r for r in roles if r in first), None)
    if role is None:
        say(sid, "I play a planner, an implementer or a reviewer: the prompt's first line says none.\n")
        outputs = {}
    else:
        outputs = roles[role](sid, prompt)
    keys = re.search(r"JSON object holding these keys: ([\w, ]+)\.", prompt)
    if keys:  # orch asks for these keys: the reply ends with them
        wanted = [k.strip() for k in keys.group(1).split(",")]
        say(sid, "\n" + json.dumps({k: outputs.get(k, "") for k in wanted}) + "\n")
    # ACP's (unstable) usage report: tokens in context and the session's cost so far.
    update(sid, sessionUpdate="usage_update", used=1200, size=200000, cost={"amount": 0.01, "currency": "USD"})
    reason = "cancelled" if sessions[sid]["cancelled"] else "end_turn"
    send({"id": rid, "result": {"stopReason": reason,
                                "usage": {"inputTokens": 1000, "outputTokens": 200, "totalTokens": 1200}}})


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        method, params, rid = msg.get("method"), msg.get("params") or {}, msg.get("id")
        if method is None:  # a response to one of our requests
            with state_lock:
                slot = waiting.pop(rid, None)
            if slot:
                slot[1] = msg
                slot[0].set()
        elif method == "initialize":
            send({"id": rid, "result": {"protocolVersion": 1, "agentCapabilities": {
                "loadSession": False, "mcpCapabilities": {"http": True}}, "authMethods": []}})
        elif method == "session/new":
            with state_lock:
                counter[0] += 1
                sid = "sess-%d" % counter[0]
                sessions[sid] = {"cwd": params.get("cwd", os.getcwd()), "cancelled": False,
                                 "mcp": params.get("mcpServers", [])}
            print("session %s in %s" % (sid, sessions[sid]["cwd"]), file=sys.stderr)
            send({"id": rid, "result": {"sessionId": sid}})
        elif method == "session/prompt":
            prompt = "".join(b.get("text", "") for b in params.get("prompt", []))
            threading.Thread(target=turn, args=(rid, params["sessionId"], prompt), daemon=True).start()
        elif method == "session/cancel":
            sessions.get(params.get("sessionId"), {})["cancelled"] = True
        elif rid is not None:
            send({"id": rid, "error": {"code": -32601, "message": "method not found: %s" % method}})


if __name__ == "__main__":
    main()
