#!/usr/bin/env python3
"""A lead and a helper (jsonl): handoffs and spawns on the temporal engine go through the workflow."""
import os
import queue
import sys
import time

LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "..", "examples", "lib")
sys.path.insert(0, os.environ.get("COLLAB_LIB") or LIB)
import orch_agent  # noqa: E402


def work(task):
    if sys.argv[1:] == ["slow"]:
        task.bb_write("slow-at-work", True)
        time.sleep(50)
        return {}
    if sys.argv[1:] == ["quick"]:
        spawned = task.spawn("kid-slow", {})
        for _ in range(300):  # until the child is at work
            if task.bb_read("slow-at-work") is not None:
                break
            time.sleep(0.1)
        return {"spawned": spawned}
    if sys.argv[1:] == ["help"]:
        deeper = task.handoff("kid-lead", "T-9", {"topic": "back"})  # depth 2: refused
        heard = ""
        if task.inputs.get("listen"):  # its parent sends it a message
            try:
                heard = task.messages.get(timeout=30)["body"]["text"]
            except queue.Empty:
                raise orch_agent.OrchError("no message came")
        return {"answer": task.inputs["topic"].upper(), "task": task.task_id, "parent": task.parent_task_id,
                "depth": task.depth, "deeper": deeper["status"] + ": " + deeper.get("reason", ""), "heard": heard}
    done = task.handoff("kid-helper", "T-1", {"topic": "rivers"})
    if done["status"] != "completed":
        raise orch_agent.OrchError(f"the handoff ended {done['status']}: {done.get('reason')}")
    refused = task.handoff("nobody", "T-2", {})
    spawned = task.spawn("kid-helper", {"listen": True})  # inherits topic from the cuelist's inputs
    for tries in range(300):  # until the child is at work
        try:
            task.send(spawned, {"text": "hello child"})
            break
        except orch_agent.OrchError:
            time.sleep(0.1)
    try:
        ann = task.announcements.get(timeout=50)
    except queue.Empty:
        raise orch_agent.OrchError("no announcement came")
    return {"handoff": done["outputs"], "refused": refused["status"] + ": " + refused.get("reason", ""),
            "spawned": spawned, "announced": {"status": ann["status"], "task": ann["task_id"], "answer": ann["outputs"]["answer"],
                          "heard": ann["outputs"]["heard"]},
            "deeper": done["outputs"]["deeper"]}


orch_agent.run(work)
