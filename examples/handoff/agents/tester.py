#!/usr/bin/env python3
"""tester: checks the handed-off feature against the acceptance criteria.

The criteria leave one case open (the empty list), so it asks: a deep question,
since answering needs the context of the feature."""
import importlib.util
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
import orch_agent  # noqa: E402


def work(task):
    ctx = task.handoff_context
    path = os.path.join(os.environ["ORCH_ROOT"], ctx["artifacts_produced"][0]["path"])
    spec = importlib.util.spec_from_file_location("feature", path)
    feature = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(feature)

    answer = task.ask("Should total([]) return 0, or raise ValueError? (answer 0 or raise)", "deep")
    checks = [("total([1, 2, 3]) == 6", feature.total([1, 2, 3]) == 6)]
    if "raise" in answer.lower():
        try:
            feature.total([])
            checks.append(("total([]) raises ValueError", False))
        except ValueError:
            checks.append(("total([]) raises ValueError", True))
    else:
        checks.append(("total([]) == 0", feature.total([]) == 0))
    report = "; ".join(f"{name}: {'ok' if ok else 'FAILED'}" for name, ok in checks)
    return {"tests_passed": all(ok for _, ok in checks), "report": f"{report} (the person said: {answer})"}


orch_agent.run(work)
