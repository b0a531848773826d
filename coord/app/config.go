package app

import (
	"context"
	"encoding/json"
)

// ConfigData is the project's stored settings document (nil: none).
func (s *Service) ConfigData(ctx context.Context) ([]byte, error) {
	data, err := s.b.ConfigData(ctx)
	return data, interrupted(ctx, err)
}

// SetConfig sets one setting of the project (value: its JSON; nil unsets
// it) on the project's backend, validated as config.json is (an unknown
// key or a bad value: CodeUsage, nothing written). The Service uses the
// new settings from then on; other processes read them when they start.
func (s *Service) SetConfig(ctx context.Context, key string, value json.RawMessage) error {
	cfg, err := s.b.SetConfig(ctx, key, value)
	if err != nil {
		return interrupted(ctx, err)
	}
	s.cfg.Store(&cfg)
	return nil
}
