package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
)

// Settings: config.json changed one key at a time (coord config set and
// unset, on every engine), and its keys listed and shown (config show and
// get). The reader is ParseConfig: a key is a setting when ParseConfig
// reads it, and a value is valid when ParseConfig accepts it.

// ConfigKeys are the settings ParseConfig reads, in the order config show
// lists them. TestConfigKeysAreParsed keeps this list and ParseConfig's
// cases the same.
var ConfigKeys = []string{
	"stale_after", "beat_interval", "lock_wait", "review_gate", "require_verified", "max_rejections",
	"on_stale", "sweep_on_claim", "scheduling", "archive_after", "lease_ttl", "lease_roster",
	"quota_daily_tokens", "quota_daily_requests", "supervisors", "backend",
	"target", "write_claims", "write_claims_untasked", "land_check", "land_parallel",
	"predicted_files", "predict_floor", "plan", "task_branch", "remote",
}

// SettingKey checks that key is a setting (CodeUsage naming the nearest
// one otherwise).
func SettingKey(key string) error {
	if isSetting(key) {
		return nil
	}
	return unknownSetting(key)
}

// unknownSetting refuses a key that is not a setting, naming the nearest
// one.
func unknownSetting(k string) error {
	e := coord.Errorf(coord.CodeUsage, "%q is not a setting", clipString(k))
	if near := closestSetting(k); near != "" {
		e.Msg += " (did you mean " + near + "?)"
	}
	return e.WithHint("settings: %s", strings.Join(ConfigKeys, ", "))
}

// closestSetting is the setting nearest to k, or "" when none is close.
func closestSetting(k string) string { return coord.NearestClose(k, ConfigKeys) }

// CheckSetting checks one setting as config.json would hold it: key must
// be a setting and value (JSON) a value ParseConfig accepts for it. Its
// error is CodeUsage, one line naming the key.
func CheckSetting(key string, value json.RawMessage) error {
	if !json.Valid(value) {
		return coord.Errorf(coord.CodeUsage, "%s: the value is not JSON", clipString(key))
	}
	doc, _ := json.Marshal(map[string]json.RawMessage{key: value})
	if _, err := parseConfig("config", doc, true); err != nil {
		if ce, ok := err.(*coord.Error); ok {
			return ce
		}
		msg := err.Error()
		var pe *ParseError
		if errors.As(err, &pe) {
			msg = pe.Msg
		}
		return coord.Errorf(coord.CodeUsage, "%s", msg)
	}
	return nil
}

// SettingValue turns what a person typed for key into its JSON value, as
// coord config set reads it: the text itself when it is JSON that key
// accepts (true, 3, {"daily":["a"]}), else the text as a JSON string
// ("15m", "requeue"). A value key accepts neither way is refused
// (CodeUsage) with ParseConfig's reason.
func SettingValue(key, text string) (json.RawMessage, error) {
	var asJSON error
	if t := strings.TrimSpace(text); json.Valid([]byte(t)) {
		v := json.RawMessage(t)
		if asJSON = CheckSetting(key, v); asJSON == nil {
			var buf bytes.Buffer
			json.Compact(&buf, v)
			return buf.Bytes(), nil
		}
	}
	str, _ := json.Marshal(text)
	if err := CheckSetting(key, str); err != nil {
		if asJSON != nil && coord.CodeOf(asJSON) == coord.CodeUsage && !strings.Contains(asJSON.Error(), "is not a setting") {
			return nil, asJSON
		}
		return nil, err
	}
	return str, nil
}

// SetSetting returns doc (config.json's content; nil or empty: none) with
// key set to value, or removed when value is nil; every other member is
// kept as it was, in its place, and a new key goes last. doc must read
// as ParseConfig reads it (an error otherwise, naming file: the stored
// settings are damaged); key and value must pass CheckSetting (CodeUsage).
// changed is false when the result is doc itself (an unset of a key that
// is not there, a value already set).
func SetSetting(file string, doc []byte, key string, value json.RawMessage) (out []byte, cfg coord.Config, changed bool, err error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("{}")
	}
	cfg, err = ParseConfig(file, doc)
	if err != nil {
		return nil, cfg, false, err
	}
	if value != nil {
		if err := CheckSetting(key, value); err != nil {
			return nil, cfg, false, err
		}
		var buf bytes.Buffer
		json.Compact(&buf, value)
		value = buf.Bytes()
	} else if !isSetting(key) {
		return nil, cfg, false, unknownSetting(key)
	}
	var members []Member
	found := false
	for _, m := range Members(doc) {
		if m.Name != key {
			members = append(members, m)
			continue
		}
		found = true
		if value == nil {
			continue
		}
		if bytes.Equal(m.Raw, value) {
			return doc, cfg, false, nil
		}
		members = append(members, Member{key, value})
	}
	switch {
	case value == nil && !found:
		return doc, cfg, false, nil
	case value != nil && !found:
		members = append(members, Member{key, value})
	}
	out = encodeSettings(members)
	cfg, err = ParseConfig(file, out)
	if err != nil { // cannot happen for a key and value that passed CheckSetting
		return nil, cfg, false, coord.Errorf(coord.CodeUsage, "%v", err)
	}
	return out, cfg, true, nil
}

func isSetting(key string) bool {
	for _, k := range ConfigKeys {
		if k == key {
			return true
		}
	}
	return false
}

// encodeSettings writes members as config.json is written: one member a
// line, two spaces in.
func encodeSettings(members []Member) []byte {
	if len(members) == 0 {
		return []byte("{}\n")
	}
	b := []byte("{\n")
	for i, m := range members {
		b = append(b, "  "...)
		b = appendString(b, m.Name)
		b = append(b, ": "...)
		b = append(b, m.Raw...)
		if i < len(members)-1 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	return append(b, "}\n"...)
}

// Settings lists every setting of ConfigKeys with its value in force,
// then the stored keys that are not coord's, as doc (the stored settings;
// nil: none) holds them.
func Settings(file string, doc []byte) ([]coord.Setting, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("{}")
	}
	if _, err := ParseConfig(file, doc); err != nil {
		return nil, err
	}
	stored := map[string]json.RawMessage{}
	var others []coord.Setting
	for _, m := range Members(doc) {
		stored[m.Name] = m.Raw
		if !isSetting(m.Name) {
			others = append(others, coord.Setting{Key: m.Name, Value: m.Raw, Set: true})
		}
	}
	def := defaultSettings()
	var out []coord.Setting
	for _, k := range ConfigKeys {
		if v, ok := stored[k]; ok {
			out = append(out, coord.Setting{Key: k, Value: v, Set: true, Known: true})
		} else {
			out = append(out, coord.Setting{Key: k, Value: def[k], Known: true})
		}
	}
	return append(out, others...), nil
}

// defaultSettings are coord.DefaultConfig's values as config.json would
// spell them (null: off, or none).
func defaultSettings() map[string]json.RawMessage {
	c := coord.DefaultConfig()
	js := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	dur := func(d time.Duration) json.RawMessage {
		if d == 0 {
			return json.RawMessage("null")
		}
		return js(shortDuration(d))
	}
	num := func(n int64) json.RawMessage {
		if n == 0 {
			return json.RawMessage("null")
		}
		return js(n)
	}
	str := func(s string) json.RawMessage {
		if s == "" {
			return json.RawMessage("null")
		}
		return js(s)
	}
	roster := json.RawMessage("null")
	if c.Roster != nil {
		roster = js(c.Roster)
	}
	return map[string]json.RawMessage{
		"stale_after": dur(c.StaleAfter), "beat_interval": dur(c.BeatInterval), "lock_wait": dur(c.LockWait),
		"review_gate": js(c.ReviewGate), "require_verified": js(c.RequireVerified), "max_rejections": num(int64(c.MaxRejections)), "on_stale": str(string(c.OnStale)), "sweep_on_claim": js(c.SweepOnClaim),
		"scheduling": str(string(c.Scheduling)), "archive_after": dur(c.ArchiveAfter), "lease_ttl": dur(c.LeaseTTL), "lease_roster": roster,
		"quota_daily_tokens": num(c.Quota.Tokens), "quota_daily_requests": num(c.Quota.Requests), "backend": str(c.Backend),
		"supervisors": json.RawMessage("null"),
		"target":      str(c.Target), "write_claims": str(string(c.WriteClaims)), "write_claims_untasked": str(string(c.WriteClaimsUntasked)),
		"land_check": str(c.LandCheck), "land_parallel": num(int64(c.LandParallel)),
		"predicted_files": str(string(c.PredictedFiles)), "predict_floor": js(c.PredictFloor), "plan": str(string(c.Plan)),
		"task_branch": str(c.TaskBranch), "remote": str(c.Remote),
	}
}

// shortDuration spells d as a Go duration without zero units: "15m",
// "1h30m", "60s" for a whole minute below an hour is "1m".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
