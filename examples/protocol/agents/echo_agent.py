#!/usr/bin/env python3
"""protocol-echo: a `protocol: jsonl` agent in plain Python (standard library only).

orch writes one JSON message per line on stdin; the agent answers with one JSON
message per line on stdout. Anything else (logs) goes to stderr.

    coord.warning  -> ack.warning    (prepare; here there is nothing to prepare)
    coord.standby  -> ack.standby    (ready)
    coord.go       -> task.complete  (outputs: the inputs, echoed, plus input_keys)
    coord.stop     -> exit

Every message has "message_type" and a fresh "id"; an answer has "in_reply_to",
the id of the message it answers. Try it by hand:

    echo '{"message_type":"coord.go","id":"g1","cue_id":"C1","task":{"inputs":{"name":"Ada"}}}' \
        | python3 echo_agent.py
"""
import json
import sys
import uuid


def log(msg):
    print(f"protocol-echo: {msg}", file=sys.stderr, flush=True)


def send(message_type, in_reply_to, cue_id, **body):
    """Write one message as one line, and flush: orch is waiting for it."""
    msg = {"message_type": message_type, "id": uuid.uuid4().hex[:12], "in_reply_to": in_reply_to}
    if cue_id:  # optional, but it lets orch check the answer is for the right cue
        msg["cue_id"] = cue_id
    msg.update(body)
    # json.dumps never writes a raw newline; allow_nan=False: NaN is not JSON.
    sys.stdout.write(json.dumps(msg, allow_nan=False) + "\n")
    sys.stdout.flush()


def outputs_for(task):
    """The work: echo the inputs, and add one field computed from them."""
    inputs = task.get("inputs") or {}
    outputs = dict(inputs)
    outputs["input_keys"] = sorted(inputs)  # the names of the inputs, sorted
    return outputs


def main():
    for line in sys.stdin:  # ends at EOF: orch closed our stdin
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
            kind, msg_id = msg["message_type"], msg["id"]
        except (ValueError, KeyError, TypeError) as err:
            log(f"ignoring a line that is not a message ({err}): {line[:200]!r}")
            continue
        task = msg.get("task") or {}
        cue_id = msg.get("cue_id") or task.get("cue_id")
        if kind == "coord.warning":
            send("ack.warning", msg_id, cue_id)
        elif kind == "coord.standby":
            send("ack.standby", msg_id, cue_id)
        elif kind == "coord.go":
            log(f"GO for cue {cue_id}, attempt {task.get('attempt')}")
            try:
                send("task.complete", msg_id, cue_id, outputs=outputs_for(task))
            except Exception as err:  # a bug in the work fails the attempt, visibly
                send("task.failed", msg_id, cue_id, error=str(err), retriable=False)
        elif kind == "coord.stop":
            log(f"stopping: {msg.get('reason', '')}")
            return
        else:
            log(f"ignoring {kind}")  # e.g. a guard.warning: nothing to do here


if __name__ == "__main__":
    main()
