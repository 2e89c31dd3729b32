package store

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
)

//go:embed schema.sql
var schemaV1 string

//go:embed schema_v3.sql
var schemaV3 string

// migrations[i] takes the schema from version i to version i+1; PRAGMA
// user_version holds the version a database is at. A later change appends
// its SQL here and never edits an entry that has shipped.
var migrations = []string{
	schemaV1,
	// v2: the owner's lease token, and the conflict decisions taken at run time.
	`ALTER TABLE runs ADD COLUMN owner_token TEXT NOT NULL DEFAULT '';
	CREATE TABLE conflicts (
		run_id TEXT NOT NULL,
		seq    INTEGER NOT NULL,
		data   TEXT NOT NULL,
		PRIMARY KEY (run_id, seq)
	) WITHOUT ROWID;`,
	schemaV3,
	// v4: the messages index becomes a view of the message events. Nothing
	// looked messages up by id, and writing the index cost every protocol
	// decision's commit a page and a statement.
	`DROP TABLE messages;
	CREATE VIEW messages AS
		SELECT run_id, seq, at, cue_id, agent_id, attempt,
			json_extract(data, '$.direction') AS direction,
			json_extract(data, '$.message_type') AS type,
			coalesce(json_extract(data, '$.id'), '') AS msg_id,
			coalesce(json_extract(data, '$.in_reply_to'), '') AS in_reply_to,
			json_extract(data, '$.body') AS body
		FROM events WHERE type = 'message';`,
	// v5: what the agents reported they used (cost, tokens, credits), per
	// attempt and per run, and the git worktree branch an attempt worked on.
	`ALTER TABLE runs ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
	ALTER TABLE runs ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE runs ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE attempts ADD COLUMN credits REAL NOT NULL DEFAULT 0;
	ALTER TABLE attempts ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
	ALTER TABLE attempts ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE attempts ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE attempts ADD COLUMN worktree_branch TEXT NOT NULL DEFAULT '';
	ALTER TABLE attempts ADD COLUMN worktree_commit TEXT NOT NULL DEFAULT '';`,
	// v6: memory keeps its history. A rewrite of a key is a new version; every
	// version, the latest included, is a row of memory_history (an item kept
	// before v6 is its version 1).
	`ALTER TABLE memory ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
	CREATE TABLE memory_history (
		key      TEXT NOT NULL,
		version  INTEGER NOT NULL,
		text     TEXT NOT NULL,
		tags     TEXT NOT NULL DEFAULT '[]',
		agent_id TEXT NOT NULL DEFAULT '',
		run_id   TEXT NOT NULL DEFAULT '',
		at       INTEGER NOT NULL,
		PRIMARY KEY (key, version)
	) WITHOUT ROWID;
	INSERT INTO memory_history (key, version, text, tags, agent_id, run_id, at)
		SELECT key, 1, text, tags, agent_id, run_id, at FROM memory;`,
	// v7: the run's DAG and who says GO, per plan cue, for orch serve's
	// page and its inbox of cues waiting for a person. Cues of older runs
	// keep the defaults: no edges known, not manual.
	`ALTER TABLE cues ADD COLUMN after_cues TEXT NOT NULL DEFAULT '[]';
	ALTER TABLE cues ADD COLUMN manual INTEGER NOT NULL DEFAULT 0;`,
	// v8: the messages to the person and the acknowledgements of
	// escalations, indexed apart, so that the inbox finds the escalations
	// not yet acknowledged across every run without reading every event.
	`CREATE INDEX events_user_messages ON events (run_id, seq) WHERE type = 'message/user';
	CREATE INDEX events_escalation_acks ON events (run_id, seq) WHERE type = 'escalation/acknowledged';`,
	// v9: the answers a question takes (an ACP permission request's
	// options), which orch answer checks an answer against.
	`ALTER TABLE questions ADD COLUMN options TEXT NOT NULL DEFAULT '[]';`,
	// v10: events becomes a rowid table, (run_id, seq) a unique index. As a
	// WITHOUT ROWID table its b-tree was keyed by (run_id, seq) and carried
	// whole rows in its interior pages: a run's big run/started and
	// run/cue_specs rows (hundreds of KB at a few thousand cues) spilled to
	// overflow pages, and when one became a divider cell on an insert's path
	// SQLite read the whole record back on every events INSERT. Now the
	// table's interior pages hold rowids only and the index holds the small
	// keys. The copy keeps each run's events together, in seq order; the
	// whole step is one transaction with the rest of migrate.
	`CREATE TABLE events_v10 (
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
	);
	INSERT INTO events_v10 (run_id, seq, at, type, cue_id, agent_id, attempt, state, reason, data)
		SELECT run_id, seq, at, type, cue_id, agent_id, attempt, state, reason, data
		FROM events ORDER BY run_id, seq;
	DROP VIEW messages;
	DROP TABLE events;
	ALTER TABLE events_v10 RENAME TO events;
	CREATE VIEW messages AS
		SELECT run_id, seq, at, cue_id, agent_id, attempt,
			json_extract(data, '$.direction') AS direction,
			json_extract(data, '$.message_type') AS type,
			coalesce(json_extract(data, '$.id'), '') AS msg_id,
			coalesce(json_extract(data, '$.in_reply_to'), '') AS in_reply_to,
			json_extract(data, '$.body') AS body
		FROM events WHERE type = 'message';
	CREATE INDEX events_user_messages ON events (run_id, seq) WHERE type = 'message/user';
	CREATE INDEX events_escalation_acks ON events (run_id, seq) WHERE type = 'escalation/acknowledged';`,
}

// schemaVersion is the schema version this build of orch writes.
var schemaVersion = len(migrations)

// applicationID marks the file as orch's ("orch" in ASCII), so that another
// program's SQLite file is not mistaken for an empty run database.
const applicationID = 0x6f726368

// ErrNewerSchema is wrapped by Open's error for a database that a newer orch
// has migrated: this one would not know how to write it, so it leaves it alone.
var ErrNewerSchema = errors.New("the database was written by a newer orch")

// ErrNotOrch is wrapped by Open's error for an SQLite file that holds
// another program's tables.
var ErrNotOrch = errors.New("the file is an SQLite database but not an orch run database")

// migrate brings the schema up to schemaVersion in one transaction. The
// transaction takes the write lock at BEGIN, so two processes opening a new
// file at once migrate it one after the other, and the second finds it done.
func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()

	version, err := schemaHeader(ctx, tx)
	if err != nil {
		return err
	}
	switch {
	case version == schemaVersion:
		return nil
	case version == 0:
		if err := notOrch(ctx, tx); err != nil {
			return err
		}
	}
	for v := version; v < schemaVersion; v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migrating the schema to version %d: %w", v+1, err)
		}
	}
	// PRAGMA takes no bound parameters; both values are integers we control.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
		return err
	}
	return tx.Commit()
}

// schemaHeader reads the database's schema version, refusing a file of
// another application or of a newer orch.
func schemaHeader(ctx context.Context, q interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}) (version int, err error) {
	var appID int
	if err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return 0, err
	}
	if err := q.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return 0, err
	}
	switch {
	case appID != 0 && appID != applicationID:
		return 0, fmt.Errorf("%w (application id %#x)", ErrNotOrch, appID)
	case version > schemaVersion:
		return 0, fmt.Errorf("%w: its schema version is %d, this orch knows up to %d; use a newer orch",
			ErrNewerSchema, version, schemaVersion)
	}
	return version, nil
}

// notOrch says why a file with no orch schema version cannot be used: it
// has tables of its own (another program's database). An empty file is
// fine: orch creates its tables.
func notOrch(ctx context.Context, tx *sql.Tx) error {
	var tables int
	err := tx.QueryRowContext(ctx,
		"SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").Scan(&tables)
	if err != nil {
		return err
	}
	if tables > 0 {
		return fmt.Errorf("%w (it has %d tables and no orch schema version)", ErrNotOrch, tables)
	}
	return nil
}
