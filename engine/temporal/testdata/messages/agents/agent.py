#!/usr/bin/env python3
"""Two jsonl agents for the temporal engine's tests: a message between them goes through the workflow."""
import os
import queue
import sys
import time

LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "..", "examples", "lib")
sys.path.insert(0, os.environ.get("COLLAB_LIB") or LIB)
import orch_agent  # noqa: E402


def work(task):
    if sys.argv[1:] == ["send"]:
        for tries in range(1, 300):  # until the receiver is at work
            try:
                task.send("msg-receiver", {"text": "hello from the sender"})
                return {"tries": tries}
            except orch_agent.OrchError:
                time.sleep(0.1)
        raise orch_agent.OrchError("the receiver never came to work")
    try:
        msg = task.messages.get(timeout=50)
    except queue.Empty:
        raise orch_agent.OrchError("no message came")
    return {"got": msg["body"]["text"], "from": msg["from"]}


orch_agent.run(work)
