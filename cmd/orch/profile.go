package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
)

// profile starts the profiles that the hidden environment variables
// ORCH_CPUPROFILE and ORCH_MEMPROFILE ask for (each a file to write, in
// pprof's format) and returns what ends them, called once before orch
// exits; ORCH_TRACE names a file for an execution trace (go tool trace:
// every goroutine's wake and park, for the path between one process's exit
// and the next one's start); ORCH_RUSAGE names a file to which a line with orch's own CPU
// seconds and its agents' is then appended (writeRusage). They are for
// measuring orch itself (bench/, the issues about its own cost): not part
// of the interface, not in --help. What cannot be written is said on
// stderr and orch goes on.
func profile(stderr *os.File) (stop func()) {
	cpu, mem, usage := os.Getenv("ORCH_CPUPROFILE"), os.Getenv("ORCH_MEMPROFILE"), os.Getenv("ORCH_RUSAGE")
	tracePath := os.Getenv("ORCH_TRACE")
	if cpu == "" && mem == "" && usage == "" && tracePath == "" {
		return func() {}
	}
	traceFile := startWriting(stderr, "ORCH_TRACE", tracePath, trace.Start)
	cpuFile := startWriting(stderr, "ORCH_CPUPROFILE", cpu, pprof.StartCPUProfile)
	if mem != "" {
		runtime.MemProfileRate = 64 << 10
	}
	return func() {
		if traceFile != nil {
			trace.Stop()
			_ = traceFile.Close()
		}
		if cpuFile != nil {
			pprof.StopCPUProfile()
			_ = cpuFile.Close()
		}
		if mem != "" {
			f, err := os.Create(mem)
			if err == nil {
				// allocs: every allocation since the start (alloc_space), and
				// what was live at the last collection (inuse_space).
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				_ = f.Close()
			}
			if err != nil {
				fmt.Fprintf(stderr, "orch: ORCH_MEMPROFILE: %v\n", err)
			}
		}
		if usage != "" {
			if err := writeRusage(usage); err != nil {
				fmt.Fprintf(stderr, "orch: ORCH_RUSAGE: %v\n", err)
			}
		}
	}
}

// startWriting creates the file named by the variable name (path; "":
// none) and starts start writing to it; it returns the file, or nil when
// there is none or it could not start (said on stderr).
func startWriting(stderr *os.File, name, path string, start func(io.Writer) error) *os.File {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err == nil {
		if err = start(f); err != nil {
			_ = f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "orch: %s: %v\n", name, err)
		return nil
	}
	return f
}
