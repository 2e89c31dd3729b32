package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	sdktemporal "go.temporal.io/sdk/temporal"

	"github.com/orch-cli/orch/engine/temporal"
)

// startWorkflow starts a run's workflow with a memo (cuelist, run, path)
// and orch's search attributes, so that temporal workflow list --query and
// the Temporal UI find runs by cuelist, id and state. A namespace without
// the search attributes gets the run without them, and note says once how
// to create them.
func startWorkflow(ctx context.Context, c client.Client, opts client.StartWorkflowOptions, in temporal.RunInput, cuelist, namespace string, note io.Writer) error {
	opts.Memo = map[string]any{"cuelist": cuelist, "run": in.RunID, "path": in.Path}
	opts.TypedSearchAttributes = temporal.SearchAttributes(cuelist, in.RunID)
	in.SearchAttributes = true
	_, err := c.ExecuteWorkflow(ctx, opts, temporal.WorkflowName, in)
	if err == nil || !missingSearchAttributes(err) {
		return err
	}
	fmt.Fprintf(note, "note: namespace %s has no search attributes %s, %s, %s (Keyword): run %s starts without them, so temporal workflow list --query cannot find it by them; create them once with: %s\n",
		namespace, temporal.AttrCuelist.GetName(), temporal.AttrRun.GetName(), temporal.AttrState.GetName(), in.RunID, createAttributes)
	opts.TypedSearchAttributes = sdktemporal.SearchAttributes{}
	in.SearchAttributes = false
	_, err = c.ExecuteWorkflow(ctx, opts, temporal.WorkflowName, in)
	return err
}

// createAttributes is how to create orch's search attributes.
var createAttributes = fmt.Sprintf("temporal operator search-attribute create --name %s --type Keyword --name %s --type Keyword --name %s --type Keyword",
	temporal.AttrCuelist.GetName(), temporal.AttrRun.GetName(), temporal.AttrState.GetName())

// missingSearchAttributes: the server refused the start for a search
// attribute the namespace does not define.
func missingSearchAttributes(err error) bool {
	var bad *serviceerror.InvalidArgument
	return errors.As(err, &bad) && strings.Contains(strings.ToLower(bad.Error()), "search attribute")
}
