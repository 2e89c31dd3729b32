// Package fakeagent is a scripted protocol: jsonl agent for orch's own tests:
// it behaves well or misbehaves in one named way, so every fault the runner
// must survive can be produced on demand. Tests register Main as a command
// (testscript) or re-exec their own binary with it.
//
//	fake-agent MODE [ARG]
//
// Modes: ok (echo inputs as outputs, plus "fake": MODE), silent-warning,
// wrong-reply, garbage, huge-line, exit-in-go, hang-in-go (with a
// background child), other-cue, fail, fail-retriable, blackboard (write
// then read a key), sleep-in-go DURATION, ignore-term (hangs in GO and
// ignores SIGTERM), pidfile FILE (writes its pid, then ok), fail-once
// (the first GO fails as retriable, later ones complete), bad-utf8 (its
// task.complete has an invalid UTF-8 byte inside a string), fail-leak VAR
// (task.failed with the value of the environment variable VAR in its error),
// flood-unread (at GO sends 2,000 blackboard.write and never reads its stdin
// again), close-stdout (at GO closes its stdout and stays alive).
package fakeagent

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/orch-cli/orch/protocols"
)

// Main runs the fake agent with args (without the program name) and returns
// its exit status.
func Main(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: fake-agent MODE [ARG]")
		return 2
	}
	mode, arg := args[0], ""
	if len(args) > 1 {
		arg = args[1]
	}
	if mode == "ignore-term" {
		signal.Ignore(syscall.SIGTERM)
	}
	if mode == "pidfile" {
		_ = os.WriteFile(arg, []byte(fmt.Sprint(os.Getpid())), 0o644)
		mode = "ok"
	}
	gos := 0
	out := bufio.NewWriter(os.Stdout)
	w := protocols.NewWriter(out)
	send := func(m protocols.Message) {
		_ = w.Send(m)
		_ = out.Flush()
	}
	r := protocols.NewReader(os.Stdin, 1<<20)
	for {
		msg, _, err := r.Next()
		if err != nil {
			return 0 // EOF: orch is done with us
		}
		switch b := msg.Body.(type) {
		case protocols.CoordWarning:
			switch mode {
			case "silent-warning":
				continue
			case "wrong-reply":
				send(protocols.Reply(msg, protocols.AckStandby{CueID: b.CueID}))
				continue
			case "garbage":
				fmt.Fprintln(out, "hello, I am not a protocol message")
				_ = out.Flush()
				continue
			case "huge-line":
				fmt.Fprintf(out, "{\"message_type\":\"status.update\",\"id\":\"x\",\"state\":\"%s\"}\n", strings.Repeat("x", 10<<20))
				_ = out.Flush()
				continue
			case "other-cue":
				send(protocols.Reply(msg, protocols.AckWarning{CueID: "SOMETHING-ELSE"}))
				continue
			}
			send(protocols.Reply(msg, protocols.AckWarning{CueID: b.CueID}))
		case protocols.CoordStandby:
			send(protocols.Reply(msg, protocols.AckStandby{CueID: b.CueID}))
		case protocols.CoordGo:
			gos++
			m := mode
			if mode == "fail-once" {
				m = "ok"
				if gos == 1 {
					m = "fail-retriable"
				}
			}
			if done := work(m, arg, msg, b, send, r); done {
				return 0
			}
		case protocols.CoordStop:
			return 0
		}
	}
}

// work answers coord.go the way the mode says; true ends the agent.
func work(mode, arg string, msg protocols.Message, b protocols.CoordGo, send func(protocols.Message), r *protocols.Reader) bool {
	switch mode {
	case "exit-in-go":
		os.Exit(3)
	case "hang-in-go", "ignore-term":
		cmd := exec.Command("sleep", "300")
		_ = cmd.Start()
		if arg != "" {
			_ = os.WriteFile(arg, []byte(fmt.Sprint(cmd.Process.Pid)), 0o644)
		}
		select {}
	case "flood-unread":
		for i := range 2000 {
			send(protocols.New(protocols.BlackboardWrite{Key: fmt.Sprintf("flood_%d", i), Value: i}))
		}
		time.Sleep(time.Hour) // reads nothing more: orch must not wait for it
	case "close-stdout":
		_ = os.Stdout.Close()
		time.Sleep(time.Hour) // alive, but it can say nothing more
	case "sleep-in-go":
		d, _ := time.ParseDuration(arg)
		time.Sleep(d)
	case "bad-utf8":
		line, _ := protocols.Encode(protocols.Reply(msg, protocols.TaskComplete{CueID: b.CueID, Outputs: map[string]any{"note": "cafe"}}))
		_, _ = os.Stdout.Write(bytes.Replace(line, []byte(`"cafe"`), []byte("\"caf\xe9\""), 1))
		return false
	case "fail":
		send(protocols.Reply(msg, protocols.TaskFailed{CueID: b.CueID, Error: "the fake agent was told to fail"}))
		return false
	case "fail-leak":
		send(protocols.Reply(msg, protocols.TaskFailed{CueID: b.CueID, Error: "login refused for " + os.Getenv(arg)}))
		return false
	case "fail-retriable":
		send(protocols.Reply(msg, protocols.TaskFailed{CueID: b.CueID, Error: "a transient failure", Retriable: true}))
		return false
	case "blackboard":
		key := "fake_note_" + b.Task.CueID
		wr := protocols.New(protocols.BlackboardWrite{Key: key, Value: map[string]any{"from": b.Task.AgentID}})
		send(wr)
		ack, _, _ := r.Next()
		rd := protocols.New(protocols.BlackboardRead{Key: key})
		send(rd)
		val, _, _ := r.Next()
		outputs := map[string]any{"ack": ack.Type, "read": fmt.Sprint(val.Body)}
		send(protocols.Reply(msg, protocols.TaskComplete{CueID: b.CueID, Outputs: outputs}))
		return false
	}
	outputs := map[string]any{"fake": mode}
	for k, v := range b.Task.Inputs {
		outputs[k] = v
	}
	send(protocols.Reply(msg, protocols.TaskComplete{CueID: b.CueID, Outputs: outputs}))
	return false
}
