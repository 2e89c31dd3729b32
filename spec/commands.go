package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Shell is the program an agent's run: line is given to.
const Shell = "/bin/sh"

// MissingCommand is a program an agent would start that cannot be started
// from here: not found in PATH, not in the agent's workdir, or not executable.
type MissingCommand struct {
	Agent   *Agent
	Field   string // JSON pointer below the agent: /command/0, /run, /prepare/0, /ready_check/0, /protocol
	Name    string // the program as the spec names it (Shell for run:; the CLI of protocol: claude-code or codex)
	Problem string // why it cannot start, with where orch looked, and how to install it when orch knows
	Hint    string // the same for a diagnostic: the place, not every directory of PATH
}

// installCommands say how to install the coding CLIs orch knows, by the
// program's name.
var installCommands = map[string]string{
	"claude": "npm install -g @anthropic-ai/claude-code",
	"codex":  "npm install -g @openai/codex",
	"gemini": "npm install -g @google/gemini-cli",
}

func (m MissingCommand) String() string {
	return fmt.Sprintf("agent %q: %s %s", m.Agent.ID, m.what(), m.Problem)
}

func (m MissingCommand) what() string {
	switch m.Field {
	case "/run":
		return fmt.Sprintf("the shell %q (for run:)", m.Name)
	case "/protocol":
		return fmt.Sprintf("the program %q (protocol: %s runs it when there is no command)", m.Name, m.Agent.Protocol)
	}
	return fmt.Sprintf("%s %q", strings.Trim(strings.TrimSuffix(m.Field, "/0"), "/"), m.Name)
}

// MissingCommands looks up the programs the agents start, as starting them
// would (orch's PATH for a bare name, the agent's workdir for a relative
// path), only reading the file system: nothing is executed.
func MissingCommands(agents []*Agent) []MissingCommand {
	var out []MissingCommand
	type result struct{ problem, hint string }
	inPath := map[string]result{} // a PATH search per name: 10,000 agents may share one program
	for _, a := range agents {
		check := func(field, name string) {
			if name == "" {
				return
			}
			r, seen := inPath[name]
			if !seen {
				r.problem, r.hint = lookCommand(name, a)
				if !strings.Contains(name, "/") {
					inPath[name] = r
				}
			}
			if r.problem != "" {
				m := MissingCommand{Agent: a, Field: field, Name: name, Problem: r.problem, Hint: r.hint}
				if install := installCommands[name]; install != "" {
					m.Problem += "; install it with: " + install
					m.Hint += "; install it with: " + install
				}
				out = append(out, m)
			}
		}
		switch {
		case a.Run != "":
			check("/run", Shell)
		case len(a.Command) > 0:
			check("/command/0", a.Command[0])
		case CLIProtocols[a.Protocol] != "": // claude-code, codex: the CLI itself
			check("/protocol", CLIProtocols[a.Protocol])
		}
		if a.Protocol != "jsonl" { // a jsonl agent ignores them (Check says so)
			if len(a.Prepare) > 0 {
				check("/prepare/0", a.Prepare[0])
			}
			if len(a.ReadyCheck) > 0 {
				check("/ready_check/0", a.ReadyCheck[0])
			}
		}
	}
	return out
}

// CommandWarnings reports MissingCommands as warnings at each command: PATH
// may differ where the specs run, so validate only warns (orch run refuses).
func CommandWarnings(agents []*Agent) Diagnostics {
	var diags Diagnostics
	for _, m := range MissingCommands(agents) {
		diags.Add(Warning, m.Agent.At(m.Field), m.Agent.Ptr+m.Field, "command-not-found",
			"agent %q: %s %s; orch run would refuse to start", m.Agent.ID, m.what(), m.Hint)
	}
	return diags
}

// lookCommand returns why name cannot be started for the agent, in full and
// in short, or "" when it can.
func lookCommand(name string, a *Agent) (problem, hint string) {
	if !strings.Contains(name, "/") {
		_, err := exec.LookPath(name)
		switch {
		case err == nil:
			return "", ""
		case errors.Is(err, exec.ErrDot):
			return fmt.Sprintf("is found only in a relative PATH directory, which orch does not use (PATH=%s)", os.Getenv("PATH")),
				"is found only in a relative PATH directory"
		}
		return fmt.Sprintf("is not found in PATH (%s)", os.Getenv("PATH")), "is not found in PATH"
	}
	dir := workdir(a)
	path := name
	if !filepath.IsAbs(name) {
		path = filepath.Join(dir, name)
	}
	shown := path // in a diagnostic, relative to where the agent's file was given
	if !filepath.IsAbs(name) {
		shown = filepath.Join(shownWorkdir(a), name)
	}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && filepath.IsAbs(name):
		return "does not exist", "does not exist"
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("does not exist in the agent's workdir %s", dir), fmt.Sprintf("does not exist at %s (relative to the agent's workdir)", shown)
	case err != nil:
		return fmt.Sprintf("cannot be read: %v", err), "cannot be read"
	case info.IsDir():
		return fmt.Sprintf("is a directory (%s)", path), fmt.Sprintf("is a directory (%s)", shown)
	case info.Mode()&0o111 == 0:
		return fmt.Sprintf("is not executable (%s)", path), fmt.Sprintf("is not executable (%s)", shown)
	}
	return "", ""
}

// workdir is where the agent's processes start: workdir, relative to the
// file that defines the agent (as the runner resolves it).
func workdir(a *Agent) string {
	if filepath.IsAbs(a.Workdir) {
		return a.Workdir
	}
	return filepath.Join(a.Dir(), a.Workdir)
}

// shownWorkdir is workdir as a diagnostic shows it: relative to the path
// the agent's file was given by.
func shownWorkdir(a *Agent) string {
	if filepath.IsAbs(a.Workdir) || a.Doc == nil || a.Doc.File == nil {
		return workdir(a)
	}
	return filepath.Join(filepath.Dir(a.Doc.File.Name), a.Workdir)
}
