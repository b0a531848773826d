package format

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
)

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig("config.json", []byte(`{"stale_after":"90","beat_interval":"30s","lock_wait":"5s","review_gate":true,
		"on_stale":"block-if-progress","quota_daily_tokens":100,"quota_daily_requests":7,"archive_after":"24h",
		"lease_roster":{"daily":["a","b"]},"sweep_on_claim":false,"scheduling":"push","max_rejections":5,"lease_ttl":"30m","supervisors":["alice","lead-1"],"a later feature":{"x":[1]},
		"target":"trunk","write_claims":"warn","write_claims_untasked":"off","require_verified":true,"land_check":"go test ./...","land_parallel":4,"predicted_files":"warn","predict_floor":0.3,"plan":"manual","task_branch":"work/{id}","remote":"origin"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := coord.Config{StaleAfter: 90 * time.Second, BeatInterval: 30 * time.Second, LockWait: 5 * time.Second, ReviewGate: true,
		OnStale: coord.BlockIfProgress, Quota: coord.QuotaLimits{Tokens: 100, Requests: 7}, ArchiveAfter: 24 * time.Hour,
		Roster: map[string][]string{"daily": {"a", "b"}}, SweepOnClaim: false, Scheduling: coord.Push, MaxRejections: 5, LeaseTTL: 30 * time.Minute,
		Supervisors: []string{"alice", "lead-1"}, Target: "trunk", WriteClaims: coord.WarnClaims, WriteClaimsUntasked: coord.UntaskedOff, RequireVerified: true,
		LandCheck: "go test ./...", LandParallel: 4, PredictedFiles: coord.PredictWarn, PredictFloor: 0.3, Plan: coord.PlanManual, TaskBranch: "work/{id}", Remote: "origin"}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("config %+v\nwant   %+v", c, want)
	}
	if c, err := ParseConfig("config.json", []byte(`{}`)); err != nil || !reflect.DeepEqual(c, coord.DefaultConfig()) || !c.SweepOnClaim {
		t.Fatalf("empty config: %+v, %v; want the defaults (sweep_on_claim on)", c, err)
	}
	for _, bad := range []string{`{"sweep_on_claim":"yes"}`, `{"stale_after":"soon"}`, `{"on_stale":"drop"}`, `{"lock_wait":"0s"}`, `{"lease_ttl":"0"}`,
		`{"scheduling":"Push"}`, `{"scheduling":null}`,
		`{"review_gate":true,"Review_gate":false}`, `{"quota_daily_tokens":-1}`, `[]`, `{"x":1} {}`,
		`{"max_rejections":0}`, `{"max_rejections":-1}`, `{"max_rejections":1.5}`, `{"max_rejections":"3"}`, `{"max_rejections":null}`,
		`{"supervisors":[]}`, `{"supervisors":"alice"}`, `{"supervisors":["bad id"]}`, `{"supervisors":["coordinator"]}`, `{"supervisors":[1]}`,
		`{"target":""}`, `{"target":"a..b"}`, `{"target":"-x"}`, `{"target":"x.lock"}`, `{"target":null}`, `{"target":"a b"}`,
		`{"write_claims":"Exclusive"}`, `{"write_claims":true}`, `{"write_claims_untasked":"exclusive"}`, `{"write_claims_untasked":null}`,
		`{"land_parallel":0}`, `{"land_parallel":65}`, `{"land_parallel":1.5}`, `{"land_parallel":"2"}`, `{"land_parallel":null}`,
		`{"require_verified":"yes"}`, `{"require_verified":null}`, `{"require_verified":1}`,
		`{"task_branch":"task"}`, `{"task_branch":"refs/heads/t/{id}"}`, `{"task_branch":"a..{id}"}`, `{"task_branch":""}`, `{"task_branch":null}`,
		`{"land_check":"make\ntest"}`, `{"land_check":true}`, `{"land_check":"` + strings.Repeat("x", coord.MaxNote+1) + `"}`,
		`{"predicted_files":"Enforce"}`, `{"predicted_files":true}`, `{"predict_floor":1.5}`, `{"predict_floor":-0.1}`, `{"predict_floor":"0.2"}`, `{"predict_floor":null}`, `{"plan":"auto "}`, `{"plan":null}`,
		`{"remote":"git://example.com/r.git"}`, `{"remote":"-x"}`, `{"remote":"a b"}`, `{"remote":"a..b"}`, `{"remote":1}`} {
		if _, err := ParseConfig("config.json", []byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "config.json: ") {
			t.Errorf("%s: %v, want an error naming config.json", bad, err)
		}
	}
}

// beat_interval is an interval (at least coord.MinInterval) and the other
// durations positive, with the flags' words, naming the file.
func TestParseConfigDurations(t *testing.T) {
	for in, want := range map[string]string{
		`{"beat_interval":"100ms"}`: `config.json: "beat_interval" 100ms is shorter than 1s: intervals are at least 1s`,
		`{"beat_interval":"0"}`:     `config.json: "beat_interval" "0" is not a positive duration like 30s`,
		`{"stale_after":"0s"}`:      `config.json: "stale_after" "0s" is not a positive duration like 30s`,
		`{"lock_wait":"-1s"}`:       `config.json: "lock_wait" "-1s" is not a positive duration like 30s`,
		`{"archive_after":"NaN"}`:   `config.json: "archive_after" "NaN" is not a positive duration like 30s`,
	} {
		if _, err := ParseConfig("config.json", []byte(in)); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v\nwant %s", in, err, want)
		}
	}
	for in, want := range map[string]time.Duration{`{"beat_interval":"1s"}`: time.Second, `{"beat_interval":"1"}`: time.Second} {
		if c, err := ParseConfig("config.json", []byte(in)); err != nil || c.BeatInterval != want {
			t.Errorf("%s: %v, %v; want %v", in, c.BeatInterval, err, want)
		}
	}
	if c, err := ParseConfig("config.json", []byte(`{"stale_after":"10ms"}`)); err != nil || c.StaleAfter != 10*time.Millisecond {
		t.Errorf("a short stale_after is not an interval: %v, %v", c.StaleAfter, err)
	}
}

// A reader's coded error (a signal ended the read: interrupted) is
// returned as it is; any other read failure is I/O.
func TestParseSeedReadErrors(t *testing.T) {
	stop := coord.Errorf(coord.CodeInterrupted, "interrupted by SIGINT")
	if _, err := ParseSeed("stdin", failingReader{stop}); coord.CodeOf(err) != coord.CodeInterrupted {
		t.Fatalf("interrupted read: %v (code %d)", err, coord.CodeOf(err))
	}
	if _, err := ParseSeed("stdin", failingReader{errors.New("EIO")}); coord.CodeOf(err) != coord.CodeIO || !strings.Contains(err.Error(), "stdin") {
		t.Fatalf("failed read: %v (code %d)", err, coord.CodeOf(err))
	}
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }
