#!/usr/bin/env python3
"""A jsonl agent for the temporal engine's tests: its requests go through the workflow."""
import os
import sys

# examples/lib from the checkout; COLLAB_LIB where a test copies the agent.
LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "..", "examples", "lib")
sys.path.insert(0, os.environ.get("COLLAB_LIB") or LIB)
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
    task.usage(3)
    if os.environ.get("COLLAB_MARK"):  # a test answers once the question is asked
        with open(os.environ["COLLAB_MARK"], "w") as f:
            f.write(read)
    answer = task.ask("Which shade of " + read + "?")
    task.bb_write("answer", answer)
    return {"v1": v1, "v2": v2, "conflict": conflict, "read": read, "answer": answer}


orch_agent.run(work)
