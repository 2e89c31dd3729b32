#!/usr/bin/env python3
"""coder: 'implements' work/feature.py, then hands it to the tester and waits.

Questions from the tester come to the coder first (it is the tester's parent);
the coder does not know the answer, so it passes them up to the person."""
import hashlib
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
import orch_agent  # noqa: E402

ARTIFACT = "work/feature.py"  # relative to the project root: the cuelist's directory ($ORCH_ROOT)


def pass_questions_up(task):
    while True:
        q = task.questions.get()
        orch_agent.log(f"coder: the tester asks {q.text!r}; passing it up")
        threading.Thread(target=q.pass_up, daemon=True).start()


def work(task):
    with open(os.path.join(os.environ["ORCH_ROOT"], ARTIFACT), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    threading.Thread(target=pass_questions_up, args=(task,), daemon=True).start()
    result = task.handoff("tester", "TEST-" + task.cue_id, {
        "task_description": task.inputs["feature"],
        "acceptance_criteria": ["total([1, 2, 3]) == 6", "the empty list is handled as the person decides"],
        "work_completed": ["total() implemented"],
        "artifacts_produced": [{"path": ARTIFACT, "hash": "sha256:" + digest}],
        "next_steps": ["run the acceptance checks"],
    })
    if result["status"] != "completed":
        raise RuntimeError(f"the handoff to the tester {result['status']}: {result.get('reason')}")
    outputs = result.get("outputs") or {}
    return {"implemented_code": ARTIFACT, "tests_passed": outputs.get("tests_passed"), "test_report": outputs.get("report")}


orch_agent.run(work)
