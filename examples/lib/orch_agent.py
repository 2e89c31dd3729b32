"""orch_agent: write a `protocol: jsonl` agent for orch in Python (standard library only).

orch writes one JSON message per line on the agent's stdin and reads its answers,
one per line, on stdout (stderr is the agent's log). This module does the
protocol: acknowledges WARNING and STANDBY, calls your function at GO on its own
thread, answers task.complete with what it returns (task.failed if it raises),
and lets it call on orch meanwhile:

    import orch_agent

    def work(task):
        task.bb_write("notes", {"seen": 3})
        answer = task.ask("Ship on Friday?", "quick")      # waits for the answer
        return {"decision": answer}

    orch_agent.run(work)

Requests wait for their own answer (matched by in_reply_to), so several may be
in flight from several threads. What orch sends unasked lands on the task's
queues: task.questions (from children: answer with q.answer(text) or pass them
up with q.pass_up()), task.announcements (spawned children that ended),
task.messages (from other tasks), task.broadcasts (from any agent at work),
task.notices (messages it oversees: its children's, as set_notify_mode says,
or routed through it). orch's status.request is answered from what
report_status last said.
task.changes has the writes to the blackboard keys the task watches:
task.watch(["plan"]) or task.watch(prefix="review/").

A fenced write, task.bb_write_if(key, value, expected_version), raises
Conflict (with .current_version and .author) when someone else wrote the key
first. task.blackboard_entries has the GO snapshot's versions and authors.
"""
import json
import queue
import sys
import threading
import traceback
import uuid

__all__ = ["run", "Task", "OrchError", "Conflict", "LoopBlocked", "log"]

_out = threading.Lock()
_pending = {}  # request id -> Queue for its answer
_tasks = {}  # cue id -> Task at GO
_spawned = {}  # spawned child's task id -> Task that spawned it
_lock = threading.Lock()


class OrchError(Exception):
    """orch refused a request (protocol.error) or answered it unexpectedly."""


class Conflict(OrchError):
    """A fenced blackboard write found the key at another version: nothing was written."""

    def __init__(self, key, expected, current_version, author):
        super().__init__(f"blackboard key {key!r} is at version {current_version} (by {author or 'nobody'}), "
                         f"not {expected}: not written")
        self.key, self.expected, self.current_version, self.author = key, expected, current_version, author


class LoopBlocked(OrchError):
    """orch's loop guard refused a request repeated loop_block times or more:
    it was not acted on; try a different approach (at loop_fail the attempt
    fails as loop_detected)."""


def log(text):
    print(text, file=sys.stderr, flush=True)


def _send(message_type, in_reply_to=None, **body):
    msg = {"message_type": message_type, "id": uuid.uuid4().hex[:12]}
    if in_reply_to:
        msg["in_reply_to"] = in_reply_to
    msg.update({k: v for k, v in body.items() if v is not None})
    line = json.dumps(msg, allow_nan=False) + "\n"  # never a raw newline inside
    with _out:
        sys.stdout.write(line)
        sys.stdout.flush()
    return msg["id"]


class Question:
    """A question from a child task: answer it, or ask it of your own parent."""

    def __init__(self, task, msg):
        self.task, self.msg = task, msg
        self.text, self.complexity = msg.get("question", ""), msg.get("complexity", "quick")

    def answer(self, text):
        _send("question.answer", self.msg["id"], question_id=self.msg.get("question_id"), answer=text)

    def pass_up(self):
        self.answer(self.task.ask(self.text, self.complexity))


class Task:
    """One GO: the task's fields, and the requests an agent may make of orch."""

    def __init__(self, task):
        self.cue_id = task.get("cue_id", "")
        self.agent_id = task.get("agent_id", "")
        self.inputs = task.get("inputs") or {}
        self.blackboard = task.get("blackboard") or {}
        self.blackboard_entries = task.get("blackboard_entries") or {}  # key -> {value, version, author}
        self.handoff_context = task.get("handoff_context") or {}
        # Where it stands in the run's task tree: the cue id for a cue's own
        # agent; a handoff or spawn child has its parent's id and a depth.
        self.task_id = task.get("task_id", "")
        self.parent_task_id = task.get("parent_task_id", "")
        self.depth = task.get("depth", 0)
        self.tools = task.get("tools") or []
        self.item = task.get("item")  # a fan-out's item (the cue has for_each); None for any other task
        self.questions, self.announcements, self.messages = queue.Queue(), queue.Queue(), queue.Queue()
        self.broadcasts = queue.Queue()
        self.notices = queue.Queue()  # message.notice: messages it oversees (its children's, or routed through it)
        self.status = {"state": "working"}  # what status.request is answered with
        self.changes = queue.Queue()  # blackboard.changed notices: {key, version, author, value}

    def request(self, message_type, **body):
        answer = queue.Queue(maxsize=1)
        msg_id = uuid.uuid4().hex[:12]
        with _lock:
            _pending[msg_id] = answer
        msg = {"message_type": message_type, "id": msg_id, "cue_id": self.cue_id}
        msg.update(body)
        with _out:
            sys.stdout.write(json.dumps(msg, allow_nan=False) + "\n")
            sys.stdout.flush()
        reply = answer.get()
        if reply is None:
            raise OrchError(f"{message_type}: orch closed the connection")
        if reply["message_type"] == "protocol.error":
            if str(reply.get("reason", "")).startswith("loop_blocked:"):
                raise LoopBlocked(f"orch refused {message_type}: {reply.get('reason')}")
            raise OrchError(f"orch refused {message_type}: {reply.get('reason')}")
        if reply["message_type"] == "spawn.accepted":
            with _lock:
                _spawned[reply["task_id"]] = self
        return reply

    def notify(self, message_type, **body):
        _send(message_type, cue_id=self.cue_id, **body)

    def bb_write(self, key, value):
        return self.request("blackboard.write", key=key, value=value)["version"]

    def bb_read(self, key):
        """The key's value, or None when it is not set."""
        reply = self.request("blackboard.read", key=key)
        return reply.get("value") if reply.get("found") else None

    def bb_write_if(self, key, value, expected_version):
        """Writes key only if it is at expected_version (0: only if it does not exist yet)."""
        reply = self.request("blackboard.write", key=key, value=value, expected_version=expected_version)
        if reply["message_type"] == "blackboard.conflict":
            raise Conflict(key, expected_version, reply.get("current_version", 0), reply.get("author", ""))
        return reply["version"]

    def watch(self, keys=None, prefix=None):
        """Every later write by anyone else to keys (or under prefix) arrives on task.changes."""
        body = {}
        if keys:
            body["keys"] = list(keys)
        if prefix:
            body["prefix"] = prefix
        return self.request("blackboard.watch", **body)

    def memory_write(self, key, text, tags=None):
        self.request("memory.write", key=key, text=text, tags=tags or [])

    def memory_search(self, query):
        """Items {key, text, tags, agent, author, version, run_id, at}, best first."""
        return self.request("memory.search", query=query)["items"]

    def memory_delete(self, key):
        """Forgets the item and its history."""
        self.request("memory.delete", key=key)

    def ask(self, question, complexity="quick"):
        return self.request("question.ask", question=question, complexity=complexity)["answer"]

    def handoff(self, to_agent, task_id, handoff_context):
        """Hands work to another agent and waits: {status, outputs, reason}."""
        return self.request("task.handoff", from_agent=self.agent_id, to_agent=to_agent, task_id=task_id,
                            handoff_context=handoff_context)

    def spawn(self, agent, inputs):
        """Starts a child without waiting; its end arrives on task.announcements."""
        return self.request("task.spawn", agent=agent, inputs=inputs)["task_id"]

    def send(self, to, body, private=False):
        """To another task, by agent id or task id: a sibling directly, any other task
        through the nearest common ancestor of the two (which is told; with
        private=True, without the body)."""
        extra = {"private": True} if private else {}
        reply = self.request("message.send", to=to, body=body, **extra)
        if reply["message_type"] == "delivery.failed":
            raise OrchError(f"message to {to} not delivered: {reply.get('reason')}")

    def user(self, body):
        self.notify("message.user", body=body)

    def discovery(self, summary):
        self.notify("discovery.report", summary=summary)

    def usage(self, credits):
        self.notify("status.usage", credits=credits)

    def list_agents(self):
        """The run's tasks in GO: [{id, task_id, cue_id, state, provides, accepts_handoff}]."""
        return self.request("agents.list")["agents"]

    def broadcast(self, body):
        """Sends body to every other agent at work; returns the task ids reached."""
        return self.request("broadcast.send", body=body)["recipients"]

    def report_status(self, state, progress=None, detail=None):
        """Tells orch this task's state (progress 0..1 or a percent); status.request gets it too."""
        status = {"state": state}
        if progress is not None:
            status["progress"] = progress
        if detail:
            status["detail"] = detail
        self.status = status
        self.notify("status.report", **status)

    def escalate(self, error, severity="medium", detail=None):
        """Shown to the person at once; high and critical ring the bell."""
        body = {"error": error, "severity": severity}
        if detail is not None:
            body["detail"] = detail
        self.notify("escalation.error", **body)

    def set_notify_mode(self, mode):
        """How children's notices reach this task: immediate, summary or silent."""
        return self.request("notify.mode", mode=mode)["mode"]


def _go(msg):
    task = Task(msg.get("task") or {})
    task.cue_id = task.cue_id or msg.get("cue_id", "")
    with _lock:
        _tasks[task.cue_id] = task
    try:
        outputs = _work(task)
        _send("task.complete", msg["id"], cue_id=task.cue_id, outputs=outputs or {})
    except Exception as err:  # the task fails; the agent goes on
        log(traceback.format_exc())
        _send("task.failed", msg["id"], cue_id=task.cue_id, error=str(err) or type(err).__name__)
    finally:
        with _lock:
            _tasks.pop(task.cue_id, None)


def _unsolicited(msg):
    kind = msg["message_type"]
    with _lock:
        if kind == "task.announce":
            task = _spawned.pop(msg.get("task_id"), None)
        else:
            task = _tasks.get(msg.get("cue_id")) or next(iter(_tasks.values()), None)
    if task is None:
        log(f"nobody to give {kind} to")
    elif kind == "question.ask":
        task.questions.put(Question(task, msg))
    elif kind == "task.announce":
        task.announcements.put(msg)
    elif kind == "message.received":
        task.messages.put(msg)
    elif kind == "broadcast.notice":
        task.broadcasts.put(msg)
    elif kind == "status.request":
        _send("status.report", msg["id"], cue_id=task.cue_id, **task.status)
    elif kind == "message.notice":
        task.notices.put(msg)
        log(f"notice: {msg.get('from')} sent {msg.get('kind')} to {msg.get('to', '')}")
    elif kind == "blackboard.changed":
        task.changes.put(msg)
    else:
        log(f"orch says {kind}: {msg.get('reason') or msg.get('body') or ''}")


def run(work, on_warning=None, on_standby=None):
    """Serves the protocol until orch closes stdin (or sends coord.stop).

    on_warning(msg) runs at coord.warning before ack.warning: msg is the
    message, with cue_group, estimated_go_time (RFC 3339) and
    preparation_required; on_standby(msg) at coord.standby before
    ack.standby, with ready_check. They run on the reader: keep them short."""
    global _work
    _work = work
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
            kind = msg["message_type"]
        except (ValueError, KeyError, TypeError) as err:
            log(f"ignoring a line that is not a message ({err})")
            continue
        if kind == "coord.warning":
            if on_warning:
                on_warning(msg)
            _send("ack.warning", msg["id"], cue_id=msg.get("cue_id"))
        elif kind == "coord.standby":
            if on_standby:
                on_standby(msg)
            _send("ack.standby", msg["id"], cue_id=msg.get("cue_id"))
        elif kind == "coord.go":
            threading.Thread(target=_go, args=(msg,), daemon=True).start()
        elif kind == "coord.stop":
            if not msg.get("cue_id"):  # the whole run is stopping
                return
        else:
            answer = None
            if kind != "guard.warning":  # a warning names a request but does not answer it
                with _lock:
                    answer = _pending.pop(msg.get("in_reply_to"), None)
            if answer is not None:
                answer.put(msg)
            else:
                _unsolicited(msg)
    with _lock:  # stdin closed: wake every request still waiting
        for answer in _pending.values():
            answer.put(None)
