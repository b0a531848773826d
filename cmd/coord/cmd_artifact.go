package main

import (
	"context"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
)

func artifactCommand(e *env) *cli.Command {
	return &cli.Command{Name: "artifact", Usage: "locked, atomic writes of ROTD artifacts under .rotd/", Commands: []*cli.Command{
		{Name: "append", Usage: "append one line from stdin (one JSON object for .jsonl)", ArgsUsage: "FILE", Action: e.cmdArtifact},
		{Name: "write", Usage: "replace FILE with stdin atomically (valid JSON for .json)", ArgsUsage: "FILE", Action: e.cmdArtifact},
	}}
}

func (e *env) cmdArtifact(_ context.Context, c *cli.Command) error {
	if c.NArg() != 1 {
		return strErr("artifact %s needs FILE", c.Name)
	}
	name := c.Args().First()
	if _, err := coord.ArtifactName(name); err != nil {
		return err
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	data, err := io.ReadAll(io.LimitReader(e.stdin, coord.MaxArtifact+1))
	if err != nil {
		return e.readErr("stdin", err)
	}
	if len(data) > coord.MaxArtifact {
		return coord.Errorf(coord.CodeUsage, "stdin is larger than %d bytes", coord.MaxArtifact)
	}
	if c.Name == "append" {
		return s.ArtifactAppend(e.ctx, name, data)
	}
	return s.ArtifactWrite(e.ctx, name, data)
}
