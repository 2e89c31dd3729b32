#!/usr/bin/env python3
"""A child's questions go to its parent agent first (bubbling_test.go)."""
import os
import queue
import sys
import time

LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "..", "examples", "lib")
sys.path.insert(0, os.environ.get("COLLAB_LIB") or LIB)
import orch_agent  # noqa: E402


def get(q, what):
    try:
        return q.get(timeout=50)
    except queue.Empty:
        raise orch_agent.OrchError(f"no {what} came")


def work(task):
    if sys.argv[1:] == ["kid"]:
        return {"colour": task.ask("Which colour?"), "shape": task.ask("Which shape?")}
    task.spawn("up-kid", {})
    first = get(task.questions, "question")
    for _ in range(18):  # the test tries to answer it as the person first (fewer reads than orch's loop guard allows)
        if task.bb_read("person-tried") is not None:
            break
        time.sleep(0.5)
    first.answer("blue")
    get(task.questions, "second question").pass_up()
    ann = get(task.announcements, "announcement")
    return {"kid": ann.get("outputs")}


orch_agent.run(work)
