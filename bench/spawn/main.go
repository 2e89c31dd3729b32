//go:build unix

// Command spawn is the baseline for orch's overhead figures: it starts N
// processes, P at a time, each in its own process group as orch does, and
// waits for each; nothing else.
//
//	go run ./bench/spawn -n 1000 -p 2 /bin/true
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
	flag.Parse()
	argv := flag.Args()
	if len(argv) == 0 {
		argv = []string{"/bin/true"}
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
