#!/usr/bin/env python3
"""bb-writer: reads the researcher's findings from the blackboard, writes a draft."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
import orch_agent  # noqa: E402


def work(task):
    findings = task.bb_read("findings") or []
    sources = task.bb_read("sources") or []
    lines = ["# Draft", ""] + [f"- {f}" for f in findings] + ["", "Sources: " + ", ".join(sources)]
    draft = "\n".join(lines) + "\n"
    task.bb_write("draft", draft)
    return {"draft": draft}


orch_agent.run(work)
