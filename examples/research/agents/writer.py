#!/usr/bin/env python3
"""research-writer: turns findings and sources into a short, cited brief.

Where its inputs come from, first found wins:
  1. the task's "inputs": RES-200 depends on RES-100, so the analyst's outputs are there;
  2. the task's "handoff_context", when it runs as the receiver of a task.handoff;
  3. the task's "blackboard" snapshot: RES-100 exports findings and sources to it.
Reports {"draft": "..."} as one JSON object in $ORCH_OUTPUT. Standard library only.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
import orch_plain  # noqa: E402
from orch_plain import read_task, write_outputs  # noqa: E402

MAX_WORDS = 300


def log(msg):
    orch_plain.log(msg, "research-writer")


def unwrap(value):
    """A blackboard entry may be the bare value or {value, version, author, ...}."""
    if isinstance(value, dict) and "value" in value and ({"version", "author"} & value.keys()):
        return value["value"]
    return value


def decode(value):
    """Values that passed through key=value text arrive as JSON strings."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def lookup(task, key):
    for layer in ("inputs", "handoff_context", "blackboard"):
        found = (task.get(layer) or {}).get(key)
        if found is not None:
            return decode(unwrap(found)), layer
    return None, None


def main():
    task = read_task()
    findings, f_from = lookup(task, "findings")
    sources, s_from = lookup(task, "sources")
    if not findings or not sources:
        log("error: need findings and sources (from inputs, handoff_context or the blackboard)")
        return 2
    if not isinstance(findings, list):
        findings = [findings]
    if not isinstance(sources, list):
        sources = [sources]
    log(f"findings from {f_from}, sources from {s_from}; "
        f"blackboard holds {sorted((task.get('blackboard') or {}).keys())}")

    topic, _ = lookup(task, "topic")
    audience, _ = lookup(task, "audience")
    topic = str(topic or "the topic")
    lines = [f"# Brief: {topic[:1].upper()}{topic[1:]}", ""]
    if audience:
        lines += [f"_For {audience}._", ""]

    lines += ["## Findings", ""]
    for f in findings:
        if isinstance(f, dict):
            claim, src = str(f.get("claim", "")).strip(), f.get("source")
        else:
            claim, src = str(f).strip(), None
        if claim:
            lines.append(f"- {claim}" + (f" [{src}]" if src else ""))

    lines += ["", "## Sources", ""]
    for s in sources:
        if isinstance(s, dict):
            lines.append(f"- [{s.get('id', '?')}] {s.get('title', '')} ({s.get('path', '')})")
        else:
            lines.append(f"- {s}")

    draft = "\n".join(lines) + "\n"
    words = len(draft.split())
    if words > MAX_WORDS:
        log(f"error: the draft has {words} words, over the {MAX_WORDS}-word limit")
        return 1
    write_outputs({"draft": draft})
    log(f"draft of {words} words, {len(findings)} findings, {len(sources)} sources")
    return 0


if __name__ == "__main__":
    sys.exit(main())
