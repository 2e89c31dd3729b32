#!/usr/bin/env python3
"""research-analyst: what do the notes in ../corpus say about the run's topic?

A protocol: none agent. orch writes the task as JSON on stdin:
    {"run_id": ..., "cue_id": "RES-100", "agent_id": "research-analyst", "attempt": 1,
     "inputs": {"topic": "...", "audience": "..."}, "blackboard": {...}, "tools": [...]}
and this script reports its outputs as one JSON object in the file $ORCH_OUTPUT:
    {"findings": [{"claim": "...", "source": "S1"}, ...],
     "sources": [{"id": "S1", "title": "...", "path": "corpus/....md"}, ...]}
No network: the "research" is a keyword ranking of local notes. Standard library only.
"""
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
import orch_plain  # noqa: E402
from orch_plain import read_task, write_outputs  # noqa: E402

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
MAX_FINDINGS = 5
MAX_PER_SOURCE = 2  # spread the findings over the notes
STOPWORDS = {"a", "an", "and", "the", "of", "to", "in", "on", "for", "with", "by", "is", "are", "how", "what"}


def log(msg):
    orch_plain.log(msg, "research-analyst")


def stems(text):
    """Crude stems: lower case, no plural s, at most 6 letters (coordinate ~ coordination)."""
    out = set()
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        if w in STOPWORDS:
            continue
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.add(w[:6])
    return out


def notes():
    """(title, relative path, [sentences]) for every note, in file-name order."""
    for path in sorted(CORPUS.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        title = path.stem
        body = []
        for line in text.splitlines():
            if line.startswith("# "):
                title = line[2:].strip()
            elif line.strip():
                body.append(line.strip())
        sentences = re.split(r"(?<=[.!?])\s+", " ".join(body))
        yield title, f"corpus/{path.name}", [s for s in sentences if s]


def main():
    task = read_task()
    inputs = task.get("inputs") or {}
    topic = str(inputs.get("topic") or "").strip()
    if not topic:
        log("error: no topic in the task's inputs")
        return 2
    wanted = stems(topic)
    log(f"topic {topic!r} (attempt {task.get('attempt', 1)}), keywords {sorted(wanted)}")

    ranked = []  # (-score, order, sentence, title, path)
    order = 0
    for title, path, sentences in notes():
        for s in sentences:
            score = len(wanted & stems(s))
            if score:
                ranked.append((-score, order, s, title, path))
            order += 1
    if not ranked:
        log(f"error: the notes in {CORPUS.name}/ say nothing about {topic!r}")
        return 1
    ranked.sort()

    findings, sources, ids, per_source = [], [], {}, {}
    for _, _, sentence, title, path in ranked:
        if len(findings) == MAX_FINDINGS:
            break
        if per_source.get(path, 0) == MAX_PER_SOURCE:
            continue
        per_source[path] = per_source.get(path, 0) + 1
        if path not in ids:
            ids[path] = f"S{len(ids) + 1}"
            sources.append({"id": ids[path], "title": title, "path": path})
        findings.append({"claim": sentence, "source": ids[path]})

    write_outputs({"findings": findings, "sources": sources})
    log(f"{len(findings)} finding(s) from {len(sources)} source(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
