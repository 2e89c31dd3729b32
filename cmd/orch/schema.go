package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/schemas"
)

type schemaOptions struct {
	io    *streams
	dir   string
	kinds []string // none: all (with --dir), or the list
}

func newSchemaCmd(f *factory, runF func(*schemaOptions) error) *cobra.Command {
	opts := &schemaOptions{io: f.io}
	cmd := &cobra.Command{
		Use:   "schema [agent|cuelist|message]",
		Short: "Print orch's JSON Schemas (for editors and other tools)",
		Long: `Print the JSON Schema (draft 2020-12) of one kind of document, self-contained.

Point your editor at it with a first line such as
  # yaml-language-server: $schema=.orch/schemas/cuelist.schema.json
after writing the files with --dir.`,
		Example: `  orch schema cuelist
  orch schema --dir .orch/schemas`,
		Args:      argsBetween(0, 1),
		ValidArgs: schemas.Kinds,
		RunE: func(_ *cobra.Command, args []string) error {
			opts.kinds = args
			if runF != nil {
				return runF(opts)
			}
			return runSchema(opts)
		},
	}
	cmd.Flags().StringVar(&opts.dir, "dir", "", "write KIND.schema.json files into this directory")
	return cmd
}

func runSchema(opts *schemaOptions) error {
	io := opts.io
	if opts.dir != "" {
		return writeSchemas(io, opts.dir, opts.kinds)
	}
	if len(opts.kinds) == 0 {
		fmt.Fprintf(io.out, "schemas: %s\n\nPrint one with 'orch schema KIND', or write them all with 'orch schema --dir DIR'.\n", strings.Join(schemas.Kinds, ", "))
		return nil
	}
	b, err := schemas.Bundle(opts.kinds[0])
	if err != nil {
		return usageError(err)
	}
	_, err = io.out.Write(b)
	return err
}

func writeSchemas(io *streams, dir string, kinds []string) error {
	if len(kinds) == 0 {
		kinds = schemas.Kinds
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usageError(err)
	}
	for _, kind := range kinds {
		b, err := schemas.Bundle(kind)
		if err != nil {
			return usageError(err)
		}
		path := filepath.Join(dir, kind+".schema.json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
		fmt.Fprintln(io.out, path)
	}
	return nil
}
