package coord

import (
	"math"
	"strings"
	"time"
)

// MaxDuration is the longest duration coord accepts: what time.Duration
// holds (about 292 years).
const MaxDuration = time.Duration(math.MaxInt64)

// ParseDuration is the one parser of every duration coord reads, from a
// flag (--lock-wait, --timeout, --ttl, --every …), the environment
// (COORD_LEASE_TTL) or config.json: a Go duration ("30s", "1h30m",
// "1.5s") or a bare decimal number of seconds ("30", "0.5"). It refuses
// what is not a duration between 0 and MaxDuration: negatives, NaN,
// infinities, exponents, hexadecimal floats and anything that overflows,
// so a caller can never get a negative or wrapped-around value that makes
// a wait time out at once. Zero is accepted; callers that need a positive
// duration say so.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, Errorf(CodeUsage, "an empty string is not a duration").WithHint("give e.g. 30s, 2m, or a number of seconds")
	}
	if s[0] == '-' {
		return 0, Errorf(CodeUsage, "duration %q is negative", clip(s)).WithHint("give a duration of 0 or more, e.g. 30s")
	}
	in := s
	if bareSeconds(s) {
		in = s + "s"
	}
	d, err := time.ParseDuration(in)
	if err != nil || d < 0 {
		// time.ParseDuration reports an overflow as a syntax error; say
		// which it is when the spelling is otherwise fine.
		if err != nil && strings.Contains(err.Error(), "invalid duration") && durationSpelling(in) {
			return 0, Errorf(CodeUsage, "duration %q is too long (at most %s)", clip(s), MaxDuration).WithHint("give a shorter duration, e.g. 24h")
		}
		return 0, Errorf(CodeUsage, "%q is not a duration", clip(s)).WithHint("give e.g. 30s, 1h30m, or a number of seconds like 30 or 0.5")
	}
	return d, nil
}

// bareSeconds reports whether s is a plain decimal number: digits with at
// most one '.', at least one digit (no sign, exponent or base prefix).
func bareSeconds(s string) bool {
	digits, dots := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}

// durationSpelling reports whether s is spelled like a Go duration (an
// optional '+', then numbers each followed by a unit), whatever its size.
func durationSpelling(s string) bool {
	s = strings.TrimPrefix(s, "+")
	if s == "" {
		return false
	}
	for s != "" {
		i := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			i++
		}
		if i == 0 || !bareSeconds(s[:i]) {
			return false
		}
		s = s[i:]
		unit := ""
		for _, u := range []string{"ns", "us", "µs", "μs", "ms", "s", "m", "h"} {
			if strings.HasPrefix(s, u) && len(u) > len(unit) {
				unit = u
			}
		}
		if unit == "" {
			return false
		}
		s = s[len(unit):]
	}
	return true
}

// RoundDuration rounds d for people: to the second from a minute up, to a
// tenth of a second from a second up, to the millisecond below ("6.7s",
// not "6.666666666s"). A positive d too short to round stays as it is,
// so the result can still drive a ticker.
func RoundDuration(d time.Duration) time.Duration {
	r := d.Round(time.Millisecond)
	switch {
	case d >= time.Minute:
		r = d.Round(time.Second)
	case d >= time.Second:
		r = d.Round(100 * time.Millisecond)
	}
	if r <= 0 && d > 0 {
		return d
	}
	return r
}

// MinInterval is the shortest interval coord repeats anything at: a beat
// (--beat, --every, beat_interval), a rescan (watch --interval), a check
// (--doctor-every). Shorter, a loop would keep a core busy and flood the
// store with writes for no gain in liveness.
const MinInterval = time.Second

// ParsePositive is ParseDuration for a duration that must be more than
// zero (a TTL, a timeout). name says where s came from in the message:
// "--ttl", `"stale_after"`, "COORD_LEASE_TTL".
func ParsePositive(name, s string) (time.Duration, error) {
	d, err := ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, Errorf(CodeUsage, "%s %q is not a positive duration like 30s", name, clip(strings.TrimSpace(s)))
	}
	return d, nil
}

// CheckTTL refuses, for what ("a lease", "every key"), a lifetime that is
// not positive (none given, or a negative one from a library caller):
// CodeUsage. A lifetime given as text is parsed by ParsePositive first.
func CheckTTL(what string, ttl time.Duration) error {
	if ttl <= 0 {
		return noTTL(what)
	}
	return nil
}

func noTTL(what string) *Error { return Errorf(CodeUsage, "%s needs a positive TTL", what) }

// ParseInterval is ParseDuration for an interval: how often something is
// repeated, at least MinInterval. name is as for ParsePositive.
func ParseInterval(name, s string) (time.Duration, error) {
	d, err := ParsePositive(name, s)
	if err != nil {
		return 0, err
	}
	if err := CheckInterval(name, d); err != nil {
		return 0, err
	}
	return d, nil
}

// CheckInterval refuses an interval shorter than MinInterval (name is as
// for ParsePositive): the one rule for every interval however it is given
// (a flag, config.json, an option of a library caller).
func CheckInterval(name string, d time.Duration) error {
	if d < MinInterval {
		return Errorf(CodeUsage, "%s %s is shorter than %s: intervals are at least %s", name, d, MinInterval, MinInterval).
			WithHint("give e.g. 30s")
	}
	return nil
}
