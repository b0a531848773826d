package format

import (
	"encoding/json"
	"math"
	"time"

	"github.com/rotd/coordination/coord"
)

// ParseConfig reads config.json strictly into a coord.Config: every key
// is optional (an absent one keeps coord.DefaultConfig's value), a known
// key with a wrong type or value is an error naming the file, and keys of
// later features and other tools are skipped, never refused.
func ParseConfig(file string, data []byte) (coord.Config, error) {
	return parseConfig(file, data, false)
}

// parseConfig is ParseConfig; strict refuses a key it does not read
// (ConfigKeys lists them) instead of skipping it.
func parseConfig(file string, data []byte, strict bool) (coord.Config, error) {
	c := coord.DefaultConfig()
	d, err := newDecoder(file, data)
	if err != nil {
		return c, err
	}
	if err := d.expect('{', "config"); err != nil {
		return c, err
	}
	var keys keySet
	// dur reads a duration by coord's rule for it (coord.ParsePositive,
	// coord.ParseInterval): the rules and words of the flags that set the
	// same.
	dur := func(key string, dst *time.Duration, parse func(name, s string) (time.Duration, error)) error {
		s, err := d.str(`"`+key+`"`, false)
		if err != nil {
			return err
		}
		v, err := parse(`"`+key+`"`, s)
		if err != nil {
			return d.errf("%v", err)
		}
		*dst = v
		return nil
	}
	for {
		k, ok, err := d.name()
		if err != nil {
			return c, err
		}
		if !ok {
			break
		}
		if cl := keys.add(k); cl != "" {
			return c, d.errf("keys %q and %q differ only in case", cl, k)
		}
		switch k {
		case "stale_after":
			err = dur(k, &c.StaleAfter, coord.ParsePositive)
		case "beat_interval":
			err = dur(k, &c.BeatInterval, coord.ParseInterval)
		case "lock_wait":
			err = dur(k, &c.LockWait, coord.ParsePositive)
		case "archive_after":
			err = dur(k, &c.ArchiveAfter, coord.ParsePositive)
		case "lease_ttl":
			err = dur(k, &c.LeaseTTL, coord.ParsePositive)
		case "lease_roster":
			var raw []byte
			if raw, err = d.raw(); err == nil {
				if jerr := json.Unmarshal(raw, &c.Roster); jerr != nil {
					err = d.errf(`"lease_roster" must map a cadence to a list of agent names, like {"daily":["a","b"]}`)
				}
			}
		case "backend":
			c.Backend, err = d.str(`"backend"`, false)
		case "review_gate":
			c.ReviewGate, err = d.boolean(`"review_gate"`)
		case "require_verified":
			c.RequireVerified, err = d.boolean(`"require_verified"`)
		case "sweep_on_claim":
			c.SweepOnClaim, err = d.boolean(`"sweep_on_claim"`)
		case "on_stale":
			var s string
			s, err = d.str(`"on_stale"`, false)
			c.OnStale = coord.StalePolicy(s)
			if err == nil && !c.OnStale.Valid() {
				err = d.errf(`"on_stale" must be "requeue" or "block-if-progress", found %q`, s)
			}
		case "scheduling":
			var s string
			s, err = d.str(`"scheduling"`, false)
			c.Scheduling = coord.Scheduling(s)
			if err == nil && !c.Scheduling.Valid() {
				err = d.errf(`"scheduling" must be "pull" or "push", found %q`, s)
			}
		case "max_rejections":
			var n int64
			n, err = d.integer(`"max_rejections"`, false)
			if err == nil && (n < 1 || n > math.MaxInt32) {
				err = d.errf(`"max_rejections" must be a whole number from 1 (block at the first rejection) up, found %d`, n)
			}
			c.MaxRejections = int(n)
		case "target":
			c.Target, err = d.str(`"target"`, false)
			if err == nil {
				if verr := coord.CheckBranchName(c.Target); verr != nil {
					err = d.errf(`"target" must name a branch: %v`, verr)
				}
			}
		case "remote":
			c.Remote, err = d.str(`"remote"`, true)
			if err == nil && c.Remote != "" {
				if verr := coord.CheckRemoteName(c.Remote); verr != nil {
					err = d.errf(`"remote" must name a git remote, like "origin": %v`, verr)
				}
			}
		case "task_branch":
			c.TaskBranch, err = d.str(`"task_branch"`, false)
			if err == nil {
				if verr := coord.CheckTaskBranch(c.TaskBranch); verr != nil {
					err = d.errf(`"task_branch" must be a branch name holding {id}, like "task/{id}", or "off": %v`, verr)
				}
			}
		case "land_check":
			c.LandCheck, err = d.str(`"land_check"`, true)
			if err == nil {
				if verr := coord.CheckLandCheck(c.LandCheck); verr != nil {
					err = d.errf(`"land_check" must be a shell command line, like "go test ./...": %v`, verr)
				}
			}
		case "land_parallel":
			var n int64
			n, err = d.integer(`"land_parallel"`, false)
			if err == nil && (n < 1 || n > coord.MaxLandParallel) {
				err = d.errf(`"land_parallel" must be a whole number from 1 (one check at a time) to %d, found %d`, coord.MaxLandParallel, n)
			}
			c.LandParallel = int(n)
		case "write_claims":
			var s string
			s, err = d.str(`"write_claims"`, false)
			c.WriteClaims = coord.ClaimMode(s)
			if err == nil && !c.WriteClaims.Valid() {
				err = d.errf(`"write_claims" must be "exclusive", "warn" or "off", found %q`, s)
			}
		case "write_claims_untasked":
			var s string
			s, err = d.str(`"write_claims_untasked"`, false)
			c.WriteClaimsUntasked = coord.UntaskedMode(s)
			if err == nil && !c.WriteClaimsUntasked.Valid() {
				err = d.errf(`"write_claims_untasked" must be "guard", "warn" or "off", found %q`, s)
			}
		case "predicted_files":
			var s string
			s, err = d.str(`"predicted_files"`, false)
			c.PredictedFiles = coord.PredictMode(s)
			if err == nil && !c.PredictedFiles.Valid() {
				err = d.errf(`"predicted_files" must be "weigh" or "off" ("enforce" and "warn", of earlier versions, mean weigh), found %q`, s)
			}
		case "predict_floor":
			c.PredictFloor, err = d.fraction(`"predict_floor"`)
		case "plan":
			var s string
			s, err = d.str(`"plan"`, false)
			c.Plan = coord.PlanMode(s)
			if err == nil && !c.Plan.Valid() {
				err = d.errf(`"plan" must be "auto" or "manual", found %q`, s)
			}
		case "supervisors":
			unset := d.PeekKind() == 'n'
			c.Supervisors, err = d.strs(`"supervisors"`)
			if err == nil && !unset {
				if cerr := coord.CheckSupervisors(c.Supervisors); cerr != nil {
					err = d.errf(`"supervisors" must list agent ids, like ["alice","lead-agent"] (%v)`, cerr)
				}
			}
		case "quota_daily_tokens":
			c.Quota.Tokens, err = d.integer(`"quota_daily_tokens"`, false)
		case "quota_daily_requests":
			c.Quota.Requests, err = d.integer(`"quota_daily_requests"`, false)
		default: // keys of later features and other tools are kept, not read
			if strict {
				return c, unknownSetting(k)
			}
			err = d.fail(d.SkipValue())
		}
		if err != nil {
			return c, err
		}
	}
	return c, d.end()
}

// ParseDepMap parses a dependency map: {"4.3": ["4.2"], …}, every key and
// element a valid task id.
func ParseDepMap(file string, data []byte) (map[string][]string, error) {
	d, err := newDecoder(file, data)
	if err != nil {
		return nil, err
	}
	if err := d.expect('{', "the dependency map"); err != nil {
		return nil, err
	}
	m := map[string][]string{}
	var keys keySet
	for {
		k, ok, err := d.name()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if cl := keys.add(k); cl != "" {
			return nil, d.errf("keys %q and %q differ only in case", cl, k)
		}
		if err := coord.ValidTaskID(k); err != nil {
			return nil, d.errf("%v", err)
		}
		deps, err := d.strs(`"` + k + `"`)
		if err != nil {
			return nil, err
		}
		for _, dep := range deps {
			if err := coord.ValidTaskID(dep); err != nil {
				return nil, d.errf("%q: %v", k, err)
			}
		}
		m[k] = deps
	}
	return m, d.end()
}
