package app

import (
	"context"
	"fmt"

	"github.com/rotd/coordination/coord"
)

// log appends one event after an operation that committed; a failure is a
// warning, never the operation's error.
func (s *Service) log(ctx context.Context, agent, format string, args ...any) {
	ev := coord.Event{Time: s.clock(), Agent: agent, Text: fmt.Sprintf(format, args...)}
	if err := s.b.Log().Append(context.WithoutCancel(ctx), ev); err != nil {
		s.warnf(fmt.Errorf("done, but the log line was not written: %w", err))
	}
}

// Msg appends an agent's message to the log. A message that would read
// as one of coord's own events is marked as a message (coord.MessageText),
// so no agent's text can pass for a claim.
func (s *Service) Msg(ctx context.Context, agent, text string) error {
	if err := coord.ValidActingAgent(agent); err != nil {
		return err
	}
	if err := coord.CheckNote("message", text); err != nil {
		return err
	}
	text = coord.MessageText(text)
	if text == "" {
		return coord.Errorf(coord.CodeUsage, "msg needs TEXT")
	}
	return interrupted(ctx, s.b.Log().Append(ctx, coord.Event{Time: s.clock(), Agent: agent, Text: text}))
}

// DefaultLogLines is how many of the log's last lines a reader is shown
// when it names no number (coord log, the MCP log tool); 0 means all of
// them to both.
const DefaultLogLines = 20

// MaxToolLogLines bounds the lines one MCP tool result carries (a model
// reads it): "all" there is the last MaxToolLogLines.
const MaxToolLogLines = 1000

// LogRead calls fn with the last n log lines, oldest first (n <= 0: all),
// across rotations; it returns how many torn or foreign lines it skipped.
func (s *Service) LogRead(ctx context.Context, n int, fn func(line string) error) (int, error) {
	skipped, err := s.b.Log().Read(ctx, n, fn)
	return skipped, interrupted(ctx, err)
}

// LogFollow calls fn with the log lines appended from now on, across
// rotations, until ctx ends (then it returns coord.ErrInterrupted) or fn
// fails. started, if not nil, is called once the follower is positioned,
// so that a caller printing history first misses nothing in between.
func (s *Service) LogFollow(ctx context.Context, started func() error, fn func(lines []string) error) error {
	fl, err := s.b.Log().Follow(ctx)
	if err != nil {
		return interrupted(ctx, err)
	}
	defer fl.Close()
	if started != nil {
		if err := started(); err != nil {
			return err
		}
	}
	err = s.Until(ctx, 0, 0, func() (bool, error) {
		lines, err := fl.Poll(ctx)
		if err != nil {
			return false, err
		}
		if len(lines) == 0 {
			return false, nil
		}
		return false, fn(lines)
	})
	return interrupted(ctx, err)
}

// Doctor checks every invariant: the engine's own (files parse, locks
// agree with the registry) and the domain's (no dependency cycle, a
// claimed task has an owner); with repair it fixes what it safely can and
// logs each fix.
func (s *Service) Doctor(ctx context.Context, repair bool) ([]coord.Problem, error) {
	probs, err := s.b.Doctor(ctx, repair)
	return nonNil(probs), interrupted(ctx, err)
}
