package main

import (
	"bytes"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestFlagConventions: on every command, -f is --follow and nothing else,
// the output format is --output (-o), and --format is at most its hidden
// alias.
func TestFlagConventions(t *testing.T) {
	root := newRootCmd(newFactory(&streams{in: bytes.NewReader(nil), out: &bytes.Buffer{}, err: &bytes.Buffer{}}))
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Shorthand == "f" && f.Name != "follow" {
				t.Errorf("%s: -f is --%s, not --follow", c.CommandPath(), f.Name)
			}
			if f.Shorthand == "o" && f.Name != "output" {
				t.Errorf("%s: -o is --%s, not --output", c.CommandPath(), f.Name)
			}
			if f.Name == "format" {
				if !f.Hidden {
					t.Errorf("%s: --format is shown; --output is the name", c.CommandPath())
				}
				if c.Flags().Lookup("output") == nil {
					t.Errorf("%s: --format without --output", c.CommandPath())
				}
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
