package main

import (
	"github.com/spf13/cobra"
)

// outputFlag registers --output (-o), the one name every command gives its
// output format, with --format as a hidden alias (orch validate and orch
// plan called it that, and scripts may still say so). -f is left to
// --follow.
func outputFlag(cmd *cobra.Command, p *string, value, usage string, formats []string) {
	f := cmd.Flags()
	f.StringVarP(p, "output", "o", value, usage)
	f.StringVar(p, "format", value, usage)
	_ = f.MarkHidden("format")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
}

// textOrJSON are the formats of the commands that print state.
var textOrJSON = []string{"text", "json"}
