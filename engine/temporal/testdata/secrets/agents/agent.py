#!/usr/bin/env python3
"""Agents that pass secrets around on the temporal engine: what they receive must be the real values."""
import os
import queue
import sys
import time

LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "..", "examples", "lib")
sys.path.insert(0, os.environ.get("COLLAB_LIB") or LIB)
import orch_agent  # noqa: E402

TOKEN, PHRASE = os.environ["SECRETS_TEST_TOKEN"], os.environ["DEPLOY_PHRASE"]


def work(task):
    role = sys.argv[1]
    if role == "receive":
        ctx = task.handoff_context
        return {"real": ctx.get("token") == TOKEN and ctx.get("phrase") == PHRASE, "echo": ctx.get("token"),
                "spec_key_real": os.environ.get("RECEIVER_API_KEY") == "key-in-the-spec-5555"}
    if role == "listen":
        task.report_status("listening", 0.5)
        try:
            b = task.broadcasts.get(timeout=50)
        except queue.Empty:
            raise orch_agent.OrchError("no broadcast came")
        return {"real": b["body"]["text"] == "the phrase is " + PHRASE, "heard": b["body"]["text"]}
    if role == "use":
        board = task.bb_read("creds")
        return {"inputs_real": task.inputs.get("token") == TOKEN and task.inputs.get("phrase") == PHRASE,
                "board_real": board == {"token": TOKEN, "phrase": PHRASE},
                "snapshot_real": task.blackboard.get("creds") == {"token": TOKEN, "phrase": PHRASE},
                "run_input_real": task.inputs.get("run_token", TOKEN) == TOKEN}  # orch run --set run_token=... (e2e)
    print("leaking " + TOKEN, file=sys.stderr, flush=True)
    for _ in range(300):  # until the listener is at work
        if any(a["id"] == "listener" for a in task.list_agents()):
            break
        time.sleep(0.1)
    time.sleep(0.5)  # its report reaches the workflow
    task.bb_write("creds", {"token": TOKEN, "phrase": PHRASE})
    task.report_status("working", 0.5, "using " + TOKEN)
    task.user({"note": "deploying with " + PHRASE})
    reached = task.broadcast({"text": "the phrase is " + PHRASE})
    done = task.handoff("receiver", "T-1", {"token": TOKEN, "phrase": PHRASE})
    if done["status"] != "completed":
        raise orch_agent.OrchError(f"the handoff ended {done['status']}: {done.get('reason')}")
    return {"token": TOKEN, "phrase": PHRASE, "handoff_real": done["outputs"]["real"] and done["outputs"]["spec_key_real"],
            "reached": reached}


orch_agent.run(work)
