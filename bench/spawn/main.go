//go:build unix

// Command spawn is the baseline for orch's overhead figures: it starts N
// processes, P at a time, each in its own process group as orch does, and
// waits for each; nothing else.
//
//	go run ./bench/spawn -n 1000 -p 2 /bin/true
//
// With -record DIR it is the floor under orch's figures instead: the same,
// plus a SQLite commit before each fork saying that the child is about to
// start (commit-before-GO), with the previous child's end (record.go).
// -rows says what a commit writes: "min", the least (one row per start,
// one per end), or "orch", the rows orch's own chained commit writes.
//
//	go run ./bench/spawn -n 200 -p 1 -record /tmp/floor -rows orch /bin/true
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 1000, "processes to start")
	p := flag.Int("p", 2, "at a time")
	record := flag.String("record", "", "commit each start and end to a SQLite database in this `directory`")
	shape := flag.String("rows", "min", "with -record, what each commit writes: min or orch")
	flag.Parse()
	argv := flag.Args()
	if len(argv) == 0 {
		argv = []string{"/bin/true"}
	}
	if *record != "" {
		spawnRecorded(*n, *p, argv, *record, *shape)
		return
	}
	start := time.Now()
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < *p; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				if err := cmd.Run(); err != nil {
					fmt.Fprintln(os.Stderr, "spawn:", err)
					os.Exit(1)
				}
			}
		}()
	}
	for i := 0; i < *n; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	fmt.Printf("%d processes, %d at a time: %.3fs\n", *n, *p, time.Since(start).Seconds())
}
