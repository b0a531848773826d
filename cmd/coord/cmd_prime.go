package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord/app"
)

func primeCommand(e *env) *cli.Command {
	return &cli.Command{Name: "prime", Usage: "print how an agent uses coord (short)", Action: e.cmdPrime}
}

func (e *env) cmdPrime(_ context.Context, c *cli.Command) error {
	_, err := e.stdout.Write([]byte(app.Prime))
	return err
}
