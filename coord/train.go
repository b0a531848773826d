package coord

// The lander's train: with land_parallel above 1 the lander checks
// several candidates at once, each on the target merged with the
// candidates ahead of it. The rules here record what each is checked on,
// for the displays; the train itself is the application's.

// StartLandingOn is StartLanding for a candidate checked on top of the
// work of the tasks on (in landing order; nil: the target alone).
func (tx *Txn) StartLandingOn(id, head string, on []string, reviewGate bool) bool {
	if !tx.StartLanding(id, head, reviewGate) {
		return false
	}
	t := tx.Task(id)
	t.LandingOn = append([]string(nil), on...)
	if len(t.LandingOn) == 0 {
		t.LandingOn = nil
	}
	return true
}

// SharesFiles reports whether a and b (sorted or not) hold a path in
// common.
func SharesFiles(a, b []string) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	in := make(map[string]bool, len(a))
	for _, p := range a {
		in[p] = true
	}
	for _, p := range b {
		if in[p] {
			return true
		}
	}
	return false
}
