#!/usr/bin/env python3
"""A stand-in for the coding agents of examples/team: offline, deterministic,
Python 3 standard library only. A protocol: none agent (orch gives it the task
as JSON on stdin, it writes its outputs as JSON to $ORCH_OUTPUT); it plays the
role its first argument names, in its working directory — the team's
directory in the attempt's git worktree, so what it writes lands on its
branch, never in your checkout.

  planner      writes work/TASKS.md and provides the task list (tasks)
  implementer  takes its task ($ORCH_ITEM as an item of a fan-out, else
               inputs.task, else inputs.tasks[inputs.task_index]):
               writes its module and its tests, and adds a line to
               work/CHANGELOG.md (every implementer does: their branches
               conflict there when they are merged)
  resolver     resolves the conflicts of a merge: for each file in conflict
               it keeps both sides, in order (inputs.merge: files, worktree)
  reviewer     reads the merged tree and gives its verdict
"""
import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
import orch_plain  # noqa: E402
from orch_plain import read_task, write_outputs  # noqa: E402

WORK = Path("work")

TASKS = [
    {"id": "slug", "title": "slugify(title)", "detail": "a URL slug: lower case, words joined by hyphens",
     "file": "work/slug.py"},
    {"id": "words", "title": "word_count(text)", "detail": "how many words a text has",
     "file": "work/words.py"},
    {"id": "titles", "title": "title_case(text)", "detail": "each word capitalised",
     "file": "work/titles.py"},
]

CODE = {
    "slug": ("import re\n\n\ndef slugify(title):\n    return \"-\".join(re.findall(r\"[a-z0-9]+\", title.lower()))\n",
             "from slug import slugify\n\n\nclass SlugTest(unittest.TestCase):\n"
             "    def test_words(self):\n        self.assertEqual(slugify(\"Hello, World!\"), \"hello-world\")\n"),
    "words": ("def word_count(text):\n    return len(text.split())\n",
              "from words import word_count\n\n\nclass WordsTest(unittest.TestCase):\n"
              "    def test_count(self):\n        self.assertEqual(word_count(\"a b  c\"), 3)\n"),
    "titles": ("def title_case(text):\n    return \" \".join(w[:1].upper() + w[1:] for w in text.split())\n",
               "from titles import title_case\n\n\nclass TitlesTest(unittest.TestCase):\n"
               "    def test_title(self):\n        self.assertEqual(title_case(\"a tale of code\"), \"A Tale Of Code\")\n"),
}


def log(msg):
    orch_plain.log(msg, "team-stand-in")


def plan(task):
    feature = task.get("inputs", {}).get("feature", "the feature")
    WORK.mkdir(exist_ok=True)
    lines = ["# Tasks: %s" % feature, ""] + ["%d. %s: %s (%s)" % (i + 1, t["title"], t["detail"], t["file"])
                                              for i, t in enumerate(TASKS)]
    (WORK / "TASKS.md").write_text("\n".join(lines) + "\n")
    log("planned %d tasks" % len(TASKS))
    return {"tasks": TASKS}


def implement(task):
    inputs = task.get("inputs", {})
    if os.environ.get("ORCH_ITEM"):  # an item of a fan-out (for_each)
        item = json.loads(os.environ["ORCH_ITEM"])
    else:  # one cue per task: its index in the planner's list
        item = inputs.get("task") or inputs["tasks"][int(inputs["task_index"])]
    code, tests = CODE[item["id"]]
    WORK.mkdir(exist_ok=True)
    Path(item["file"]).write_text(code)
    Path("work/test_%s.py" % item["id"]).write_text("import unittest\n\n" + tests)
    with open(WORK / "CHANGELOG.md", "a") as f:
        f.write("- %s: %s\n" % (item["title"], item["detail"]))
    log("implemented %s in %s" % (item["title"], item["file"]))
    return {"summary": "implemented %s" % item["title"]}


MARK = re.compile(r"^(<{7}|={7}|>{7}|\|{7})( .*)?$")


def resolve(task):
    merge = task.get("inputs", {}).get("merge", {})
    if merge.get("problem") != "conflict":
        log("cannot fix: %s" % merge.get("reason"))
        sys.exit(1)
    for name in merge.get("files", []):
        path = Path(merge["worktree"]) / name
        kept = [line for line in path.read_text().splitlines(keepends=True) if not MARK.match(line.rstrip("\n"))]
        path.write_text("".join(kept))
        log("kept both sides of %s" % name)
    return {"summary": "resolved %s" % ", ".join(merge.get("files", []))}


def review(task):
    modules = sorted(p.name for p in WORK.glob("*.py") if not p.name.startswith("test_"))
    tests = sorted(p.name for p in WORK.glob("test_*.py"))
    log("read %s and %s" % (", ".join(modules), ", ".join(tests)))
    done = all(Path(t["file"]).exists() for t in TASKS)
    return {"verdict": "approve" if done and len(tests) == len(TASKS) else "changes requested",
            "text": "modules: %s; tests: %s" % (", ".join(modules), ", ".join(tests))}


def main():
    roles = {"planner": plan, "implementer": implement, "resolver": resolve, "reviewer": review}
    if len(sys.argv) != 2 or sys.argv[1] not in roles:
        sys.exit("usage: stand_in.py planner|implementer|resolver|reviewer")
    write_outputs(roles[sys.argv[1]](read_task()))


if __name__ == "__main__":
    main()
