#!/usr/bin/env python3
"""bb-researcher: puts its findings on the blackboard, not in its outputs."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
import orch_agent  # noqa: E402


def work(task):
    topic = task.inputs["topic"]
    findings = [
        f"{topic}: every participant is warned before anything starts",
        f"{topic}: standing by is an explicit, acknowledged state",
        f"{topic}: one GO starts all participants at once",
    ]
    sources = ["stage-management.md", "blackboard.md"]
    v1 = task.bb_write("findings", findings)
    v2 = task.bb_write("sources", sources)
    orch_agent.log(f"bb-researcher: findings v{v1}, sources v{v2}")
    return {}


orch_agent.run(work)
