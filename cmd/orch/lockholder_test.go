//go:build unix

package main

import (
	"bufio"
	"database/sql"
	"fmt"
	"os"

	_ "modernc.org/sqlite"
)

// lockHolderMain is orch-hold-lock DB: another process holding the run
// database's write lock, as a sqlite3 shell in a transaction, a backup or
// an orch suspended in the middle of a commit do. It takes the lock
// (BEGIN IMMEDIATE), says "held" on stdout, and keeps the lock until its
// stdin ends; then it commits and exits.
func lockHolderMain(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: orch-hold-lock DB")
		return 2
	}
	db, err := sql.Open("sqlite", "file:"+args[0]+"?_pragma=busy_timeout(10000)")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("BEGIN IMMEDIATE"); err != nil {
		fmt.Fprintln(os.Stderr, "orch-hold-lock:", err)
		return 1
	}
	fmt.Println("held")
	_, _ = bufio.NewReader(os.Stdin).ReadString(0) // until stdin ends
	if _, err := db.Exec("COMMIT"); err != nil {
		fmt.Fprintln(os.Stderr, "orch-hold-lock:", err)
		return 1
	}
	return 0
}
