//go:build !unix

package mcpserver

import (
	"context"
	"fmt"
)

var strayLines = []string{"stray: os.Stdout"}

func straySummary(context.Context) string {
	fmt.Println("stray: os.Stdout")
	return "stray summary"
}
