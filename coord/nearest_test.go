package coord

import "testing"

// TestNearestClose: a prefix or a near miss is suggested, a far one is
// not (the settings' and the seed fields' "did you mean" alike).
func TestNearestClose(t *testing.T) {
	known := []string{"stale_after", "beat_interval", "land_check", "target"}
	for name, want := range map[string]string{
		"stale_aftr":       "stale_after", // a letter dropped
		"taregt":           "target",      // two neighbours swapped
		"land":             "land_check",  // a prefix
		"STALE_AFTER":      "stale_after",
		"zzz":              "",
		"quota_everything": "",
	} {
		if got := NearestClose(name, known); got != want {
			t.Errorf("NearestClose(%q) = %q, want %q", name, got, want)
		}
	}
}
