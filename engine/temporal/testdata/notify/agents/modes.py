#!/usr/bin/env python3
"""Notification modes (notifymode_test.go)."""
import os
import queue
import sys

LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "..", "examples", "lib")
sys.path.insert(0, os.environ.get("COLLAB_LIB") or LIB)
import orch_agent  # noqa: E402


def work(task):
    if sys.argv[1] == "helper":
        task.user({"text": "one"})
        task.user({"text": "two"})
        return {"shown": 2}
    task.set_notify_mode(sys.argv[2])
    task.spawn("mode-helper", {})
    try:
        task.announcements.get(timeout=50)
    except queue.Empty:
        raise orch_agent.OrchError("no announcement came")
    got = []
    while not task.notices.empty():
        n = task.notices.get()
        body = n.get("body") or {}
        if n.get("kind") == "summary":
            got.append("summary of " + body.get("task_id", "") + ": " + ", ".join(x["body"]["text"] for x in body.get("notices", [])))
        else:
            got.append(n.get("kind", "") + ": " + body.get("text", ""))
    return {"notices": got}


orch_agent.run(work)
