#!/usr/bin/env python3
"""researcher: one finding about one topic, from the notes next to it."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
import orch_agent  # noqa: E402

NOTES = {
    "market trends": "market trends: teams move from scripts to declared pipelines",
    "competitors": "competitors: most tools run steps; few coordinate agents",
}


def work(task):
    topic = task.inputs["topic"]
    task.discovery(f"looked into {topic}")  # for the lead, without interrupting it
    return {"finding": NOTES.get(topic, f"{topic}: nothing in the notes")}


orch_agent.run(work)
