-- Schema version 1 of the orch run database.
--
-- Conventions: times are INTEGER unix microseconds in UTC (NULL: not yet);
-- JSON values are TEXT; absent strings are '' rather than NULL so that Go
-- scans them into plain strings. The state tables (runs, cues, attempts,
-- messages, blackboard, cooldowns) are projections of the events table,
-- written in the same transaction as the events that change them.

-- One row per run. inputs is the JSON object of the run parameters.
CREATE TABLE runs (
    id           TEXT PRIMARY KEY,
    cuelist      TEXT NOT NULL,
    spec_path    TEXT NOT NULL DEFAULT '',
    spec_hash    TEXT NOT NULL DEFAULT '',
    inputs       TEXT NOT NULL DEFAULT 'null',
    state        TEXT NOT NULL,
    reason       TEXT NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL, -- when the row was written
    started_at   INTEGER NOT NULL, -- the time of the run/started event
    ended_at     INTEGER,
    owner_pid    INTEGER NOT NULL DEFAULT 0,
    owner_host   TEXT NOT NULL DEFAULT '',
    heartbeat_at INTEGER
);
-- orch status lists the newest runs first; "last" is the newest.
CREATE INDEX runs_by_start ON runs (started_at, id);

-- One row per cue of a run, created pending by run/started.
CREATE TABLE cues (
    run_id     TEXT NOT NULL REFERENCES runs (id),
    cue_id     TEXT NOT NULL,
    position   INTEGER NOT NULL, -- index in plan order
    agents     TEXT NOT NULL DEFAULT '[]',
    state      TEXT NOT NULL,
    reason     TEXT NOT NULL DEFAULT '',
    attempts   INTEGER NOT NULL DEFAULT 0, -- highest attempt number recorded
    warning_at INTEGER,
    standby_at INTEGER,
    go_at      INTEGER,
    ended_at   INTEGER,
    outputs    TEXT, -- JSON object, set when the cue completes
    approved   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, cue_id)
) WITHOUT ROWID;
CREATE INDEX cues_by_position ON cues (run_id, position);

-- One row per attempt of one agent at one cue; recorded before the launch.
CREATE TABLE attempts (
    run_id     TEXT NOT NULL,
    cue_id     TEXT NOT NULL,
    number     INTEGER NOT NULL,
    agent_id   TEXT NOT NULL,
    state      TEXT NOT NULL,
    reason     TEXT NOT NULL DEFAULT '',
    class      TEXT NOT NULL DEFAULT '',
    exit_code  INTEGER, -- NULL when the process did not exit by itself
    pid        INTEGER NOT NULL DEFAULT 0,
    fallback   INTEGER NOT NULL DEFAULT 0,
    started_at INTEGER NOT NULL,
    ended_at   INTEGER,
    outputs    TEXT,
    PRIMARY KEY (run_id, cue_id, number, agent_id),
    FOREIGN KEY (run_id, cue_id) REFERENCES cues (run_id, cue_id)
) WITHOUT ROWID;

-- The append-only log. seq is contiguous per run, starting at 1, assigned
-- inside the write transaction so that several processes can append to one
-- run. data is the event's JSON payload, exactly as given.
--
-- events and output take no FOREIGN KEY to runs: checking one costs about a
-- fifth of the writer's time per row, and the writer checks once per
-- transaction that the run exists before it writes either.
CREATE TABLE events (
    run_id   TEXT NOT NULL,
    seq      INTEGER NOT NULL,
    at       INTEGER NOT NULL,
    type     TEXT NOT NULL,
    cue_id   TEXT NOT NULL DEFAULT '',
    agent_id TEXT NOT NULL DEFAULT '',
    attempt  INTEGER NOT NULL DEFAULT 0,
    state    TEXT NOT NULL DEFAULT '',
    reason   TEXT NOT NULL DEFAULT '',
    data     TEXT,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

-- An index of the protocol messages, for finding a message by type, id or
-- the id it answers. The rest (time, cue, agent, the body) is in the event
-- (run_id, seq) that carried it: the writer's time goes to one copy only.
CREATE TABLE messages (
    run_id      TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    direction   TEXT NOT NULL, -- out: orch to agent; in: agent to orch
    type        TEXT NOT NULL,
    msg_id      TEXT NOT NULL DEFAULT '',
    in_reply_to TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

-- Every version of every blackboard key; the latest is the highest version.
CREATE TABLE blackboard (
    run_id  TEXT NOT NULL REFERENCES runs (id),
    key     TEXT NOT NULL,
    version INTEGER NOT NULL,
    value   TEXT NOT NULL,
    author  TEXT NOT NULL DEFAULT '',
    at      INTEGER NOT NULL,
    PRIMARY KEY (run_id, key, version)
) WITHOUT ROWID;

-- Cooldowns hold across runs, so they are keyed by agent alone.
CREATE TABLE cooldowns (
    agent_id TEXT PRIMARY KEY,
    until    INTEGER NOT NULL,
    reason   TEXT NOT NULL DEFAULT '',
    run_id   TEXT NOT NULL DEFAULT '', -- the run that set it
    set_at   INTEGER NOT NULL
) WITHOUT ROWID;

-- Agent output lines, in arrival order (id).
CREATE TABLE output (
    id       INTEGER PRIMARY KEY,
    run_id   TEXT NOT NULL,
    cue_id   TEXT NOT NULL DEFAULT '',
    agent_id TEXT NOT NULL DEFAULT '',
    attempt  INTEGER NOT NULL DEFAULT 0,
    stream   TEXT NOT NULL,
    at       INTEGER NOT NULL,
    text     TEXT NOT NULL
);
-- orch logs RUN CUE and orch logs RUN, both paged by id.
CREATE INDEX output_by_cue ON output (run_id, cue_id, id);
CREATE INDEX output_by_run ON output (run_id, id);

-- Requests from other orch processes to a run's owner (orch go RUN CUE).
CREATE TABLE commands (
    id         INTEGER PRIMARY KEY,
    run_id     TEXT NOT NULL REFERENCES runs (id),
    kind       TEXT NOT NULL,
    cue_id     TEXT NOT NULL DEFAULT '',
    arg        TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    done_at    INTEGER
);
-- The owner polls for its pending commands; done ones drop out of the index.
CREATE INDEX commands_pending ON commands (run_id, id) WHERE done_at IS NULL;
