package coord

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	ok := []struct {
		in   string
		want time.Duration
	}{
		{"30s", 30 * time.Second},
		{"30", 30 * time.Second},
		{" 30s ", 30 * time.Second},
		{"0", 0},
		{"0s", 0},
		{"0.5", 500 * time.Millisecond},
		{".5", 500 * time.Millisecond},
		{"5.", 5 * time.Second},
		{"1.5s", 1500 * time.Millisecond},
		{"1h30m", 90 * time.Minute},
		{"+5s", 5 * time.Second},
		{"250ms", 250 * time.Millisecond},
		{"2562047h47m16.854775807s", MaxDuration},
		{"9223372036.854775807", MaxDuration},
	}
	for _, c := range ok {
		got, err := ParseDuration(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	bad := []struct{ in, why string }{
		{"", "not a duration"},
		{"NaN", "not a duration"},
		{"nan", "not a duration"},
		{"Inf", "not a duration"},
		{"+Inf", "not a duration"},
		{"-Inf", "negative"},
		{"infinity", "not a duration"},
		{"1e300", "not a duration"},
		{"1e3", "not a duration"},
		{"1E3s", "not a duration"},
		{"0x10", "not a duration"},
		{"0x1p4", "not a duration"},
		{"1_000", "not a duration"},
		{"-5", "negative"},
		{"-5s", "negative"},
		{"-0", "negative"},
		{"5 s", "not a duration"},
		{"abc", "not a duration"},
		{"1.2.3", "not a duration"},
		{"9223372036854775807", "too long"},
		{"9223372036.854775808", "too long"},
		{"2562048h", "too long"},
		{"99999999999999999999h", "too long"},
	}
	for _, c := range bad {
		got, err := ParseDuration(c.in)
		if err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", c.in, got)
			continue
		}
		if CodeOf(err) != CodeUsage || !strings.Contains(err.Error(), c.why) {
			t.Errorf("ParseDuration(%q): %v (code %d), want a usage error saying %q", c.in, err, CodeOf(err), c.why)
		}
	}
}

func TestRoundDuration(t *testing.T) {
	for _, c := range []struct{ in, want time.Duration }{
		{20 * time.Second / 3, 6700 * time.Millisecond},
		{5 * time.Minute / 3, 100 * time.Second},
		{time.Second / 3, 333 * time.Millisecond},
		{time.Minute, time.Minute},
		{time.Millisecond / 3, time.Millisecond / 3},
		{0, 0},
	} {
		if got := RoundDuration(c.in); got != c.want {
			t.Errorf("RoundDuration(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// FuzzParseDuration: whatever the input, the parser never panics and
// never returns a negative duration; what it accepts reads back the same
// from its own String form; a bare number means that many seconds.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30s", "30", "0.5", "1h30m", "NaN", "Inf", "-Inf", "1e300", "-5", "0x1p4",
		"9223372036854775807", "2562047h47m16.854775807s", "2562048h", "+5s", ".5", "1.5µs", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			if CodeOf(err) != CodeUsage {
				t.Fatalf("ParseDuration(%q): %v is not a usage error", s, err)
			}
			return
		}
		if d < 0 {
			t.Fatalf("ParseDuration(%q) = %v < 0", s, d)
		}
		if back, err := ParseDuration(d.String()); err != nil || back != d {
			t.Fatalf("ParseDuration(%q) = %v, but its String %q reads back as %v, %v", s, d, d.String(), back, err)
		}
		trimmed := strings.TrimSpace(s)
		if bareSeconds(trimmed) {
			n, err := strconv.ParseFloat(trimmed, 64)
			if err != nil {
				t.Fatalf("%q: accepted as seconds but not a number: %v", s, err)
			}
			want := n * float64(time.Second)
			if diff := math.Abs(float64(d) - want); diff > 1+want*1e-12 {
				t.Fatalf("ParseDuration(%q) = %v, want about %v ns", s, d, want)
			}
		}
		low := strings.ToLower(trimmed)
		for _, w := range []string{"nan", "inf", "e", "x", "-"} {
			if strings.Contains(low, w) {
				t.Fatalf("ParseDuration(%q) = %v: accepted %q", s, d, w)
			}
		}
	})
}

// Every positive duration and every interval is judged by one rule each,
// with one wording naming where the value came from.
func TestParsePositiveAndInterval(t *testing.T) {
	for _, c := range []struct {
		in            string
		positive, ivl time.Duration // 0: refused
		why           string        // for the interval
	}{
		{"30s", 30 * time.Second, 30 * time.Second, ""},
		{"1", time.Second, time.Second, ""},
		{"1s", time.Second, time.Second, ""},
		{"999ms", 999 * time.Millisecond, 0, `--x 999ms is shorter than 1s: intervals are at least 1s`},
		{"1ns", time.Nanosecond, 0, `--x 1ns is shorter than 1s`},
		{"0.5", 500 * time.Millisecond, 0, `--x 500ms is shorter than 1s`},
		{"0", 0, 0, `--x "0" is not a positive duration like 30s`},
		{"0s", 0, 0, `--x "0s" is not a positive duration like 30s`},
		{"-1s", 0, 0, `--x "-1s" is not a positive duration like 30s`},
		{"NaN", 0, 0, `--x "NaN" is not a positive duration like 30s`},
		{"", 0, 0, `--x "" is not a positive duration like 30s`},
	} {
		p, err := ParsePositive("--x", c.in)
		if c.positive == 0 {
			if err == nil || CodeOf(err) != CodeUsage || !strings.HasPrefix(err.Error(), `--x "`) {
				t.Errorf("ParsePositive(%q) = %v, %v; want a usage error naming --x", c.in, p, err)
			}
		} else if err != nil || p != c.positive {
			t.Errorf("ParsePositive(%q) = %v, %v; want %v", c.in, p, err, c.positive)
		}
		i, err := ParseInterval("--x", c.in)
		if c.ivl == 0 {
			if err == nil || CodeOf(err) != CodeUsage || !strings.HasPrefix(err.Error(), c.why) {
				t.Errorf("ParseInterval(%q) = %v, %v; want a usage error %q", c.in, i, err, c.why)
			}
		} else if err != nil || i != c.ivl {
			t.Errorf("ParseInterval(%q) = %v, %v; want %v", c.in, i, err, c.ivl)
		}
	}
	if CheckInterval("x", MinInterval) != nil || CheckInterval("x", MinInterval-1) == nil {
		t.Error("CheckInterval: MinInterval is the floor, itself allowed")
	}
}

// TestCheckTTL: a lifetime given as a value (a library caller's, or none)
// is refused in one wording wherever one is needed.
func TestCheckTTL(t *testing.T) {
	for _, c := range []struct {
		ttl  time.Duration
		want string
	}{{0, "a lease needs a positive TTL"}, {-time.Second, "a lease needs a positive TTL"}, {time.Nanosecond, ""}} {
		err := CheckTTL("a lease", c.ttl)
		if got := fmt.Sprint(err); c.want == "" && err != nil || c.want != "" && (got != c.want || CodeOf(err) != CodeUsage) {
			t.Errorf("CheckTTL(%v): %v, want %q", c.ttl, err, c.want)
		}
	}
	if err := (LeaseRequest{Name: "l", Holder: "a"}).Check(); fmt.Sprint(err) != "a lease needs a positive TTL" {
		t.Errorf("a lease request without a TTL: %v", err)
	}
	if _, err := Renewed(Lease{Name: "l"}, -time.Second, time.Now()); fmt.Sprint(err) != "a lease renewal needs a positive TTL" {
		t.Errorf("a renewal by a negative TTL: %v", err)
	}
}
