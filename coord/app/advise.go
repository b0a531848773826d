package app

import (
	"context"
	"time"

	"github.com/rotd/coordination/coord"
)

// adviceLogLines is how much of the log's end the advice counts
// conflict events in (only those within coord.AdviceWindow count).
const adviceLogLines = 2000

// Advise says how many agents to run now (coord advise):
// coord.Txn.Advise over the registry, with the conflicts found in the
// last coord.AdviceWindow counted in the log.
func (s *Service) Advise(ctx context.Context) (coord.Advice, error) {
	var a coord.Advice
	now := s.clock()
	ev, err := s.conflictEvents(ctx, now)
	if err != nil {
		return a, err
	}
	err = s.tasks().View(ctx, func(tx *coord.Txn) error {
		a = tx.Advise(now, ev)
		return nil
	})
	return a, interrupted(ctx, err)
}

// conflictEvents counts the log's conflict and send-back lines of the
// advice's window that coord itself wrote (coord.IsConflictEvent).
func (s *Service) conflictEvents(ctx context.Context, now time.Time) (coord.ConflictEvents, error) {
	var ev coord.ConflictEvents
	since := coord.FormatTime(now.Add(-coord.AdviceWindow))
	_, err := s.LogRead(ctx, adviceLogLines, func(line string) error {
		e, ok := coord.ParseLogLine(line)
		if !ok || e.Timestamp < since {
			return nil
		}
		switch coord.IsConflictEvent(e.AgentID, e.Message) {
		case "conflict":
			ev.Conflicts++
		case "sendback":
			ev.SendBacks++
		}
		return nil
	})
	return ev, err
}
