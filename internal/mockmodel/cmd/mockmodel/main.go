// Command mockmodel serves internal/mockmodel's scripted model on loopback,
// for running the coding CLIs against it by hand (and timing them):
//
//	go run ./internal/mockmodel/cmd/mockmodel -addr 127.0.0.1:8089 [-scripts FILE] [-dump DIR]
//
// It prints its URL, then serves until interrupted. The scripts are the
// package's Standard ones, or FILE's ({"NAME": [{"text", "write": {"path",
// "content"}, "shell", "input_tokens", "output_tokens"}, ...]}). A prompt
// picks one with "[mock-script NAME]".
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/orch-cli/orch/internal/mockmodel"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	file := flag.String("scripts", "", "a JSON file of scripts by name (default: the standard ones)")
	dump := flag.String("dump", "", "a directory for each request's body and answer")
	flag.Parse()
	scripts := mockmodel.Standard
	if *file != "" {
		b, err := os.ReadFile(*file)
		if err == nil {
			scripts = nil
			err = json.Unmarshal(b, &scripts)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "mockmodel: %s: %v\n", *file, err)
			os.Exit(2)
		}
	}
	s, err := mockmodel.Start(mockmodel.Config{Addr: *addr, Scripts: scripts, Dump: *dump})
	if err != nil {
		fmt.Fprintln(os.Stderr, "mockmodel:", err)
		os.Exit(1)
	}
	fmt.Println(s.URL)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	_ = s.Close()
}
