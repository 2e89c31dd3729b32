#!/usr/bin/env python3
"""A jsonl agent for the temporal engine's tests: its requests go through the workflow."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "..", "examples", "lib"))
import orch_agent  # noqa: E402


def work(task):
    if sys.argv[1:] == ["read"]:
        return {"seen": task.bb_read("answer")}
    v1 = task.bb_write("color", "red")
    v2 = task.bb_write_if("color", "green", v1)
    conflict = ""
    try:
        task.bb_write_if("color", "blue", 0)
    except orch_agent.Conflict as e:
        conflict = f"at {e.current_version} by {e.author}"
    read = task.bb_read("color")
    task.report_status("working", progress=0.5, detail="asked the person")
    answer = task.ask("Which shade of " + read + "?")
    task.bb_write("answer", answer)
    return {"v1": v1, "v2": v2, "conflict": conflict, "read": read, "answer": answer}


orch_agent.run(work)
