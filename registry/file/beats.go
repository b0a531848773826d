package file

import (
	"context"
	"time"

	"github.com/rotd/coordination/coord"
)

// beats serves package heartbeat's Dir as the engine's coord.BeatStore,
// its file-system errors turned into coded ones naming the file.
type beats struct{ b *Backend }

func (h beats) Beat(ctx context.Context, agent string, info *coord.BeatInfo) error {
	return IOError(h.b.beats.Beat(ctx, agent, info), "")
}

func (h beats) List(ctx context.Context) ([]coord.Beat, time.Time, error) {
	l, now, err := h.b.beats.List(ctx)
	return l, now, IOError(err, "")
}

func (h beats) LastSeen(ctx context.Context, agents []string) (map[string]time.Time, time.Time, error) {
	m, now, err := h.b.beats.LastSeen(ctx, agents)
	return m, now, IOError(err, "")
}

func (h beats) SeenAll(ctx context.Context) (map[string]time.Time, time.Time, error) {
	m, now, err := h.b.beats.SeenAll(ctx)
	return m, now, IOError(err, "")
}
