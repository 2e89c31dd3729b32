"""orch_plain: the three things a `protocol: none` agent in Python does (standard library only).

orch starts the agent at GO with the task as JSON on stdin and ORCH_* variables;
the agent logs to stderr and reports its outputs as one JSON object in the file
named by $ORCH_OUTPUT (printed on stdout when run by hand, without orch).
"""
import json
import os
import sys

__all__ = ["log", "read_task", "write_outputs"]


def log(msg, default_id="agent"):
    print(f"{os.environ.get('ORCH_AGENT_ID', default_id)}: {msg}", file=sys.stderr)


def read_task():
    if sys.stdin.isatty():  # run by hand
        return {}
    raw = sys.stdin.read()
    return json.loads(raw) if raw.strip() else {}


def write_outputs(outputs):
    data = json.dumps(outputs, ensure_ascii=False)
    path = os.environ.get("ORCH_OUTPUT")
    if not path:
        print(data)
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(data + "\n")
