package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxValue is the largest value a tool takes (a blackboard value, a
// message, a handoff's context...), as jsonl's longest line.
const MaxValue = 1 << 20

// schemas is shared by every server: each tool's schemas are resolved
// once in the process.
var schemas = mcp.NewSchemaCache()

// newBinding is task's side of the tools: the tools its policy denies are
// not listed, and a call to one of them is an error result naming the
// policy. progress is how often a call that waits tells the client so (0:
// every 10s).
func newBinding(task Task, progress time.Duration) *binding {
	if progress <= 0 {
		progress = 10 * time.Second
	}
	return &binding{task: task, progress: progress}
}

// deniedTools are the tools the binding's policy denies, in the catalog's
// order, asked of its task the first time (Endpoint.serverFor, under the
// endpoint's lock, before any call of the binding is served).
func (b *binding) deniedTools() []string {
	b.deniedOnce.Do(func() {
		for _, d := range catalog() {
			if d.family != "" && b.task.Denied(d.family) != "" {
				b.denied = append(b.denied, d.tool.Name)
			}
		}
	})
	return b.denied
}

// newServer returns a server offering every tool but the denied ones (in
// the catalog's order), each call acting as the binding attached to it.
// An Endpoint shares one among the attempts denied the same tools: an
// attempt costs a token, not a server.
func newServer(denied []string, attached attachment) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "orch", Title: "orch: the run's blackboard, questions, messages and tasks"},
		&mcp.ServerOptions{SchemaCache: schemas, HasTools: true,
			Instructions: "Tools to work with the other agents of this orch run and the person running it: " +
				"share results on the blackboard, ask the person, message other agents, hand work off."})
	for _, d := range catalog() {
		if !slices.Contains(denied, d.tool.Name) {
			d.add(s, attached)
		}
	}
	s.AddReceivingMiddleware(middleware(attached))
	return s
}

// errNoAttempt answers a call no attempt is attached to (in theory: the
// endpoint authenticates every request).
var errNoAttempt = errors.New("this call is not made by an attempt of the run")

// middleware answers a call to a tool that is denied or unknown with an
// error result (the model reads it and goes on; a protocol error would end
// its turn in many clients), and records every call the bridge refused.
func middleware(attached attachment) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || method != "tools/call" {
				return next(ctx, method, req)
			}
			b := attached(call)
			if b == nil {
				return errorResult(errNoAttempt), nil
			}
			name := call.Params.Name
			if d, ok := byName()[name]; ok && slices.Contains(b.deniedTools(), name) {
				return b.refuse(name, fmt.Sprintf("tool %s is denied by the agent's tools: policy: %s", name, b.task.Denied(d.family))), nil
			}
			if _, ok := byName()[name]; !ok {
				return b.refuse(name, fmt.Sprintf("unknown tool %q; orch's tools are %s", name, strings.Join(b.offered(), ", "))), nil
			}
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.CallToolResult); ok && r.IsError && !errors.As(r.GetError(), new(taskError)) {
				b.task.Refused(name, resultText(r))
			}
			return res, err
		}
	}
}

func errorResult(err error) *mcp.CallToolResult {
	r := &mcp.CallToolResult{}
	r.SetError(err)
	return r
}

// refuse records a refused call and returns its error result.
func (b *binding) refuse(tool, reason string) *mcp.CallToolResult {
	b.task.Refused(tool, reason)
	return errorResult(errors.New(reason))
}

// offered lists the tools not denied.
func (b *binding) offered() []string {
	var names []string
	for _, d := range catalog() {
		if !slices.Contains(b.deniedTools(), d.tool.Name) {
			names = append(names, d.tool.Name)
		}
	}
	return names
}

func resultText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}

// checkSize refuses arguments over MaxValue, naming the largest field.
func checkSize(args json.RawMessage) error {
	if len(args) <= MaxValue {
		return nil
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(args, &fields)
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return len(fields[names[i]]) > len(fields[names[j]]) })
	what := "the arguments are"
	if len(names) > 0 {
		what = fmt.Sprintf("%q is", names[0])
		args = fields[names[0]]
	}
	return fmt.Errorf("%s %.1f MiB; a value may be at most 1 MiB (share a file path instead)", what, float64(len(args))/(1<<20))
}

// waiting runs f, a call that waits (for an answer, for a receiver), and
// meanwhile tells the client every b.progress that it still waits, when
// the client asked for progress.
func waiting[T any](ctx context.Context, b *binding, req *mcp.CallToolRequest, what string, f func(context.Context) (T, error)) (T, error) {
	token := req.Params.GetProgressToken()
	if token == nil {
		return f(ctx)
	}
	type outcome struct {
		v   T
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		v, err := f(ctx)
		done <- outcome{v, err}
	}()
	tick := time.NewTicker(b.progress)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case o := <-done:
			return o.v, o.err
		case <-tick.C:
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: what})
		}
	}
}
