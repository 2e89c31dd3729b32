#!/usr/bin/env python3
"""A talker and a hearer (jsonl): broadcasts, agents.list and what the person is shown, through the workflow."""
import os
import queue
import sys
import time

LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "..", "examples", "lib")
sys.path.insert(0, os.environ.get("COLLAB_LIB") or LIB)
import orch_agent  # noqa: E402


def work(task):
    if sys.argv[1:] == ["hear"]:
        task.report_status("listening", 0.5)
        try:
            b = task.broadcasts.get(timeout=50)
        except queue.Empty:
            raise orch_agent.OrchError("no broadcast came")
        return {"heard": b["body"], "from": b["from"]}
    print("the token is " + os.environ["PEOPLE_API_TOKEN"], file=sys.stderr, flush=True)  # early: read long before its end
    for _ in range(300):  # until the hearer is at work
        listed = task.list_agents()
        if any(a["id"] == "hearer" for a in listed):
            break
        time.sleep(0.1)
    time.sleep(0.5)  # its report reaches the workflow
    listed = task.list_agents()
    reached = task.broadcast({"text": "all hands"})
    task.user({"text": "half way, token " + os.environ["PEOPLE_API_TOKEN"]})
    task.discovery("the cache is cold")
    task.escalate("disk almost full", "high", {"free": "2%"})
    task.notify("escalation.conflict", conflict_type="resource", resource_in_question="db", reason="both migrate")
    return {"listed": sorted(f"{a['task_id']} {a['id']} {a['state']}" for a in listed), "reached": reached}


orch_agent.run(work)
