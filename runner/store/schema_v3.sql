-- Schema version 3 of the orch run database: agents working together
-- (child tasks, questions, credits) and memory across runs. Same
-- conventions as schema.sql.

-- A child task (the receiver of a handoff, a spawned agent) is a cue row
-- too, so its states and attempts are recorded like a plan cue's. Plan cues
-- keep the defaults: no parent, no kind, depth 0.
ALTER TABLE cues ADD COLUMN parent   TEXT NOT NULL DEFAULT '';  -- the task that started it
ALTER TABLE cues ADD COLUMN kind     TEXT NOT NULL DEFAULT '';  -- handoff or spawn
ALTER TABLE cues ADD COLUMN depth    INTEGER NOT NULL DEFAULT 0;
ALTER TABLE cues ADD COLUMN task_ref TEXT NOT NULL DEFAULT '';  -- the task_id the sender gave a handoff
ALTER TABLE cues ADD COLUMN context  TEXT;                      -- JSON: handoff_context or the spawn's inputs

-- The run's credits so far (status.usage), kept by usage/reported.
ALTER TABLE runs ADD COLUMN credits REAL NOT NULL DEFAULT 0;

-- The blackboard becomes two tables. blackboard holds the latest version of
-- each key: every GO task carries a snapshot of it, and reading the latest
-- versions out of every version ever written grew with the run (0.4 s after
-- 100,000 writes). blackboard_history holds every version in the order
-- written: appending there touches the last page or two, where the v1 table,
-- ordered by key, had a write to each of many keys touch a page each.
ALTER TABLE blackboard RENAME TO blackboard_v2;
CREATE TABLE blackboard (
    run_id  TEXT NOT NULL,
    key     TEXT NOT NULL,
    version INTEGER NOT NULL,
    value   TEXT NOT NULL,
    author  TEXT NOT NULL DEFAULT '',
    at      INTEGER NOT NULL,
    PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
CREATE TABLE blackboard_history (
    id      INTEGER PRIMARY KEY,
    run_id  TEXT NOT NULL,
    key     TEXT NOT NULL,
    version INTEGER NOT NULL,
    value   TEXT NOT NULL,
    author  TEXT NOT NULL DEFAULT '',
    at      INTEGER NOT NULL
);
CREATE INDEX blackboard_history_by_run ON blackboard_history (run_id, id);
INSERT INTO blackboard_history (run_id, key, version, value, author, at)
    SELECT run_id, key, version, value, author, at FROM blackboard_v2 ORDER BY run_id, at, key, version;
INSERT INTO blackboard (run_id, key, version, value, author, at)
    SELECT run_id, key, version, value, author, at FROM blackboard_v2 b
    WHERE version = (SELECT max(version) FROM blackboard_v2 WHERE run_id = b.run_id AND key = b.key);
DROP TABLE blackboard_v2;

-- One row per question an agent asked; state is 'open' until
-- question/closed sets answered, unanswered or withdrawn.
CREATE TABLE questions (
    run_id      TEXT NOT NULL,
    qid         TEXT NOT NULL,              -- q1, q2, ... per run
    cue_id      TEXT NOT NULL,              -- the asker's task
    agent_id    TEXT NOT NULL,
    attempt     INTEGER NOT NULL,
    question    TEXT NOT NULL,
    complexity  TEXT NOT NULL,              -- quick or deep
    asked_to    TEXT NOT NULL,              -- "person" or the parent agent
    deadline    INTEGER,
    state       TEXT NOT NULL DEFAULT 'open',
    answer      TEXT NOT NULL DEFAULT '',
    answered_by TEXT NOT NULL DEFAULT '',
    reason      TEXT NOT NULL DEFAULT '',
    asked_at    INTEGER NOT NULL,
    closed_at   INTEGER,
    PRIMARY KEY (run_id, qid),
    FOREIGN KEY (run_id, cue_id) REFERENCES cues (run_id, cue_id)
) WITHOUT ROWID;
-- orch status lists a run's open questions; most of a run's questions are closed.
CREATE INDEX questions_open ON questions (run_id, qid) WHERE state = 'open';

-- Memory holds across runs, so it is keyed by its key alone. id is an
-- INTEGER PRIMARY KEY because the full-text index refers to rows by rowid,
-- and only an alias of the rowid is sure to survive a VACUUM.
CREATE TABLE memory (
    id       INTEGER PRIMARY KEY,
    key      TEXT NOT NULL UNIQUE,
    text     TEXT NOT NULL,
    tags     TEXT NOT NULL DEFAULT '[]', -- JSON array of strings
    agent_id TEXT NOT NULL DEFAULT '',
    run_id   TEXT NOT NULL DEFAULT '',
    at       INTEGER NOT NULL
);
CREATE INDEX memory_by_time ON memory (at, id);

-- The full-text index of memory (FTS5, external content: the text is stored
-- once, in memory). The porter stemmer lets "deploying" find "deploy". The
-- triggers keep it in step with every insert, update and delete.
CREATE VIRTUAL TABLE memory_fts USING fts5(
    key, text, tags,
    content = 'memory', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memory_fts_insert AFTER INSERT ON memory BEGIN
    INSERT INTO memory_fts (rowid, key, text, tags) VALUES (new.id, new.key, new.text, new.tags);
END;
CREATE TRIGGER memory_fts_delete AFTER DELETE ON memory BEGIN
    INSERT INTO memory_fts (memory_fts, rowid, key, text, tags) VALUES ('delete', old.id, old.key, old.text, old.tags);
END;
CREATE TRIGGER memory_fts_update AFTER UPDATE ON memory BEGIN
    INSERT INTO memory_fts (memory_fts, rowid, key, text, tags) VALUES ('delete', old.id, old.key, old.text, old.tags);
    INSERT INTO memory_fts (rowid, key, text, tags) VALUES (new.id, new.key, new.text, new.tags);
END;
