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
task.messages (from other tasks), task.notices (messages it oversees).
"""
import json
import queue
import sys
import threading
import traceback
import uuid

__all__ = ["run", "Task", "OrchError", "log"]

_out = threading.Lock()
_pending = {}  # request id -> Queue for its answer
_tasks = {}  # cue id -> Task at GO
_spawned = {}  # spawned child's task id -> Task that spawned it
_lock = threading.Lock()


class OrchError(Exception):
    """orch refused a request (protocol.error) or answered it unexpectedly."""


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
        self.handoff_context = task.get("handoff_context") or {}
        # Where it stands in the run's task tree: the cue id for a cue's own
        # agent; a handoff or spawn child has its parent's id and a depth.
        self.task_id = task.get("task_id", "")
        self.parent_task_id = task.get("parent_task_id", "")
        self.depth = task.get("depth", 0)
        self.tools = task.get("tools") or []
        self.questions, self.announcements, self.messages = queue.Queue(), queue.Queue(), queue.Queue()
        self.notices = queue.Queue()  # message.notice: messages it oversees (its children's, or routed through it)

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
    elif kind == "message.notice":
        task.notices.put(msg)
    else:
        log(f"orch says {kind}: {msg.get('reason') or msg.get('body') or ''}")


def run(work):
    """Serves the protocol until orch closes stdin (or sends coord.stop)."""
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
            _send("ack.warning", msg["id"], cue_id=msg.get("cue_id"))
        elif kind == "coord.standby":
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
