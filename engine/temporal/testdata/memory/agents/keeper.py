#!/usr/bin/env python3
"""Memory on Temporal (memory_test.go, e2e/temporal)."""
import os
import sys

LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "..", "examples", "lib")
sys.path.insert(0, os.environ.get("COLLAB_LIB") or LIB)
import orch_agent  # noqa: E402


def found(task, query):
    return [f"{i['key']} v{i['version']} by {i['author']}" for i in task.memory_search(query)]


def work(task):
    before = found(task, "deploy")
    task.memory_write("lesson", "deploy on tuesdays, token " + os.environ.get("MEM_SECRET", ""), ["ops"])
    if "forget" in [i["key"] for i in task.memory_search("forget*")]:
        task.memory_delete("forget")
    return {"before": before, "after": found(task, "deploy") + found(task, "forget*")}


orch_agent.run(work)
