package main

import (
	"fmt"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/internal/otelrun"
	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/record"
)

// display is how a command that runs a run in the foreground shows it.
type display struct {
	output    string   // text or json
	stream    bool     // print the agents' output lines as they come
	tailLines int      // last lines of output shown under each failed attempt
	notify    []string // --notify: more places the run's notices go
	otel      bool     // --otel: export the run as an OpenTelemetry trace
}

// flags adds --output and --stream to a command that runs a run.
func (d *display) flags(cmd *cobra.Command, outputUsage string) {
	outputFlag(cmd, &d.output, "text", outputUsage, textOrJSON)
	cmd.Flags().BoolVarP(&d.stream, "stream", "v", false, "print the agents' output as it comes, each line prefixed by its cue and agent")
	cmd.Flags().IntVar(&d.tailLines, "tail-lines", defaultTailLines, "last lines of output shown under each failed attempt (0: none)")
	cmd.Flags().StringArrayVar(&d.notify, "notify", nil, notifyUsage)
	cmd.Flags().BoolVar(&d.otel, "otel", false, otelUsage)
}

const otelUsage = "export the run as an OpenTelemetry trace (OTLP, as OTEL_EXPORTER_OTLP_PROTOCOL says: http/protobuf by default, or grpc) to OTEL_EXPORTER_OTLP_ENDPOINT, else " + otelrun.DefaultEndpoint + "; setting that variable alone turns it on"

const notifyUsage = "also send the run's notices (a person needed, failed, completed) as JSON to a webhook (http:// or https://) or on a command's stdin (split at spaces, no shell); repeatable"

func (d display) check() error {
	if d.output != "text" && d.output != "json" {
		return usageError(fmt.Errorf("unknown output %q (want text or json)", d.output))
	}
	if d.stream && d.output == "json" {
		return usageError(fmt.Errorf("--stream prints text lines and --output json prints events: use one (orch logs RUN --follow shows the output beside --output json)"))
	}
	for _, target := range d.notify {
		if err := checkNotifyTarget(target); err != nil {
			return usageError(err)
		}
	}
	return nil
}

// streamBuffer is how many output lines may wait for a slow terminal. An
// agent never waits for the terminal: past this, lines are counted, not
// shown, and a note says how many (orch logs has them all).
const streamBuffer = 4096

// streamPrinter prints the agents' output lines, as docker compose up does:
// "CUE agent | line", the prefix padded to a common width and, on a
// terminal, coloured per cue. Lines reach it already redacted (it is handed
// what is recorded) and are printed by one goroutine, through print (the
// progress display's printAbove, so that they never land inside its
// redrawn block).
type streamPrinter struct {
	print    func(string)
	color    bool
	width    int
	terminal bool // control characters are shown as ^X (terminalSafe)

	lines chan record.LogLine
	done  chan struct{}

	mu      sync.Mutex
	closed  bool
	dropped int
	runID   string
	colors  map[string]string // cue -> ANSI colour code
}

// streamColors are the prefixes' colours, given to cues in turn (red is
// left out: it says failure everywhere else).
var streamColors = []string{"36", "33", "32", "35", "34", "96", "93", "92", "95", "94"}

func newStreamPrinter(print func(string), color bool, p *planner.Plan) *streamPrinter {
	s := &streamPrinter{print: print, color: color, lines: make(chan record.LogLine, streamBuffer), done: make(chan struct{}),
		colors: map[string]string{}}
	for _, c := range p.Order {
		for _, a := range c.Agents {
			s.width = max(s.width, len(c.ID)+1+len(a))
		}
	}
	s.width = min(s.width, 32)
	go s.loop()
	return s
}

// add queues a line; it never blocks. A line that comes once the run has
// ended (an agent's last words while it is being stopped) is not shown.
func (s *streamPrinter) add(l record.LogLine) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	select {
	case s.lines <- l:
	default:
		s.dropped++
		s.runID = l.RunID
	}
}

func (s *streamPrinter) loop() {
	defer close(s.done)
	for l := range s.lines {
		s.noteDropped()
		s.print(s.format(l))
	}
	s.noteDropped()
}

// noteDropped says how many lines were not shown since the last note.
func (s *streamPrinter) noteDropped() {
	s.mu.Lock()
	n, run := s.dropped, s.runID
	s.dropped = 0
	s.mu.Unlock()
	if n > 0 {
		s.print(fmt.Sprintf("… %d line(s) not shown (the terminal was slower than the agents), see orch logs %s", n, run))
	}
}

func (s *streamPrinter) format(l record.LogLine) string {
	prefix := l.Cue + " " + l.Agent
	if pad := s.width - len(prefix); pad > 0 {
		prefix += strings.Repeat(" ", pad)
	}
	prefix += " |"
	if s.color {
		prefix = "\x1b[" + s.colorOf(l.Cue) + "m" + prefix + "\x1b[0m"
	}
	text := strings.TrimRight(l.Text, "\r\n")
	if s.terminal {
		text = terminalSafe(text)
	}
	return prefix + " " + text
}

// colorOf gives each cue its colour; a child task ("CUE/1") has its cue's.
func (s *streamPrinter) colorOf(cue string) string {
	cue, _, _ = strings.Cut(cue, "/")
	c, ok := s.colors[cue]
	if !ok {
		c = streamColors[len(s.colors)%len(streamColors)]
		s.colors[cue] = c
	}
	return c
}

// close prints what is still queued and stops.
func (s *streamPrinter) close() {
	s.mu.Lock()
	s.closed = true
	close(s.lines)
	s.mu.Unlock()
	<-s.done
}

// streamRecorder hands each output line the runner records to the printer
// as well.
type streamRecorder struct {
	record.Recorder
	s *streamPrinter
}

func (r streamRecorder) Log(line record.LogLine) {
	r.Recorder.Log(line)
	r.s.add(line)
}
