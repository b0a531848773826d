package dashboard

// LimiterTracked is how many client addresses s's limit on wrong tokens
// holds.
func (s *Server) LimiterTracked() int { return s.limit.tracked() }
