package main

import (
	"github.com/urfave/cli/v2"

	"github.com/rotd/coord/coord/app"
)

func primeCommand(e *env) *cli.Command {
	return &cli.Command{Name: "prime", Usage: "print how an agent uses coord (short)", Action: e.cmdPrime}
}

func (e *env) cmdPrime(c *cli.Context) error {
	_, err := e.stdout.Write([]byte(app.Prime))
	return err
}
