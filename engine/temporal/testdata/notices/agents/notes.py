#!/usr/bin/env python3
"""Messages between tasks and who is told of them (notices_test.go)."""
import os
import queue
import sys
import time

LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "..", "examples", "lib")
sys.path.insert(0, os.environ.get("COLLAB_LIB") or LIB)
import orch_agent  # noqa: E402


def send(task, to, text):
    for _ in range(300):  # until the recipient is at work
        try:
            task.send(to, {"text": text})
            return
        except orch_agent.OrchError:
            time.sleep(0.1)
    raise orch_agent.OrchError(f"{to} never took a message")


def heard(task, n):
    got = []
    for _ in range(n):
        try:
            got.append(task.messages.get(timeout=50)["body"]["text"])
        except queue.Empty:
            raise orch_agent.OrchError(f"{len(got)} of {n} messages came")
    return sorted(got)


def announced(task, n):
    for _ in range(n):
        try:
            task.announcements.get(timeout=50)
        except queue.Empty:
            raise orch_agent.OrchError("no announcement came")


def work(task):
    role = sys.argv[1]
    if role == "lead":
        task.spawn("note-a", {})
        task.spawn("note-b", {})
        announced(task, 2)
        notices = []
        while not task.notices.empty():
            n = task.notices.get()
            notices.append(f"{n.get('from')}->{n.get('to')} {n.get('from_task', '')}->{n.get('to_task', '')} "
                           f"routed={n.get('routed', False)} {(n.get('body') or {}).get('text', '')}")
        return {"notices": sorted(notices)}
    if role == "a":
        task.spawn("note-c", {})
        send(task, "note-b", "from a")
        announced(task, 1)
        return {"sent": True}
    if role == "c":
        send(task, "note-b", "from c")
        send(task, "OTHER-100", "from c")
        return {"sent": True}
    if role == "b":
        return {"heard": heard(task, 2)}
    return {"heard": heard(task, 1)}


orch_agent.run(work)
