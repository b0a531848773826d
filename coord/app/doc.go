// Package app is coord's application API: every operation a front end
// offers (the CLI, the MCP server, the hooks, the dashboard, the
// scheduler) as one Go call with typed requests and results, over any
// storage engine that implements the interfaces of package coord.
//
// It owns the order of things (beat, sweep, claim, log), never the rules
// (those are coord's) and never the storage (the engine's). Front ends
// parse their input, call a Service method, and format the result; they
// hold no rule and name no storage package.
//
// Promises: a method that returns an error has changed nothing (an error
// after a commit is reported through Warn, and the method succeeds); every
// id and text is validated before any store is touched; every wait honours
// its context and returns an error matching coord.ErrInterrupted when it
// ends by cancellation.
package app
