package format

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/rotd/coordination/coord"
)

// Version is the registry format this coord writes and reads.
const Version = 1

// Member is one raw object member: its name and its value's bytes.
type Member struct {
	Name string
	Raw  []byte
}

// member kinds in Registry.top: a raw member kept as it was, or the place
// of a member the Registry writes itself.
const (
	rawMember = iota
	tasksMember
	locksMember
	agentsMember
)

type member struct {
	name string
	raw  []byte
	kind int
}

// rawLock is a path lock as it was read, kept to be written back byte for
// byte (unknown members included) while it stays unchanged.
type rawLock struct {
	lock coord.PathLock
	raw  []byte
}

// Registry is a parsed active_work_registry.json: the tasks (decoded
// fields plus their raw bytes), the epoch counter, the path locks, and the
// other top-level members, in file order.
type Registry struct {
	Tasks     []*coord.Task
	LastEpoch int64 // top-level "last_epoch": the highest epoch ever issued
	// PathLocks is the top-level "path_locks" member. It is written when
	// it is not empty or was present when read (HasPathLocks).
	PathLocks []coord.PathLock
	// Agents is the top-level "agents" member: the pool of registered
	// agents (docs/SCHEDULING.md). It is written when it is not empty or was
	// present when read (HasAgents).
	Agents []coord.PoolAgent

	top      []member       // top-level members but last_epoch, in file order
	locksRaw []rawLock      // path locks as read
	index    map[string]int // task id -> position in Tasks, built by Parse
}

// known task fields in the order a fresh task is written.
var taskFieldOrder = []string{
	"id", "title", "status", "priority", "deps", "capability", "skill_level",
	"files", "conflict_group", "claimed_by", "claimed_at", "completed_at",
	"epoch", "progress", "blocked_reason", "reviewer_id", "review_notes",
	"reviewer_kind", "assigned_to", "assigned_at", "review_started_at",
	"blocked_at", "description", "rejections", "review_alert_at",
	"branch", "base", "touched_files", "head", "landed_commit", "landed_at", "conflicts",
	"receipts", "reviewed_commit", "landing_at",
	"predicted_files", "predicted_at", "predicted_confidence", "owner", "fenced", "landing_on",
}

// legacyRejectReason is what coord called review_notes before: read as
// review_notes (which wins when a task has both), and written back under
// the new name when the task changes.
const legacyRejectReason = "reject_reason"

// taskFieldsRead are the names the reader knows, indexed as
// taskFieldIndex indexes them: taskFieldOrder, then the legacy name.
var taskFieldsRead = append(taskFieldOrder[:len(taskFieldOrder):len(taskFieldOrder)], legacyRejectReason)

// Parse reads a registry strictly. file names it in errors. The returned
// tasks keep views into data, which must not be modified afterwards.
func Parse(file string, data []byte) (*Registry, error) {
	if len(data) >= 3 && string(data[:3]) == "\xef\xbb\xbf" {
		return nil, &ParseError{file, "starts with a byte-order mark; save it as plain UTF-8"}
	}
	s := &scanner{data: data, file: file}
	f := &Registry{}
	if s.peek() != '{' {
		return nil, s.errf("the registry must be a JSON object, found %s", s.kindName())
	}
	sawTasks := false
	err := s.object(func(name string) error {
		switch name {
		case "tasks":
			sawTasks = true
			f.top = append(f.top, member{name: name, kind: tasksMember})
			return f.parseTasks(s)
		case "path_locks":
			f.top = append(f.top, member{name: name, kind: locksMember})
			return f.parsePathLocks(s)
		case "agents":
			f.top = append(f.top, member{name: name, kind: agentsMember})
			return f.parseAgents(s)
		case "version":
			v, err := s.intVal(`"version"`, false)
			if err != nil {
				return err
			}
			if v != Version {
				return s.errf(`"version" is %d; this coord reads version %d (upgrade coord)`, v, Version)
			}
			f.top = append(f.top, member{name: name, raw: []byte(strconv.FormatInt(v, 10))})
		case "last_epoch":
			var err error
			f.LastEpoch, err = s.intVal(`"last_epoch"`, false)
			return err
		default:
			if k := caseTwin(name, topFields); k != "" {
				return s.errf("%q is not a field; names are case-sensitive (did you mean %q?)", name, k)
			}
			s.ws()
			a := s.i
			if err := s.value(); err != nil {
				return err
			}
			f.top = append(f.top, member{name: name, raw: s.data[a:s.i]})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := s.end(); err != nil {
		return nil, err
	}
	if !sawTasks {
		return nil, &ParseError{file, `has no "tasks" array`}
	}
	return f, nil
}

// Index returns the id -> position index of Tasks that Parse built (nil
// for a registry not parsed), for coord.Txn.UseIndex.
func (f *Registry) Index() map[string]int { return f.index }

// HasPathLocks reports whether the registry holds a "path_locks" member
// (possibly empty): a registry written before path locks moved into it
// has none, and its path locks are still lock files.
func (f *Registry) HasPathLocks() bool {
	for _, m := range f.top {
		if m.kind == locksMember {
			return true
		}
	}
	return false
}

// Touch refreshes a last_updated member if the registry has one (ROTD's).
func (f *Registry) Touch(now time.Time) {
	for i, m := range f.top {
		if m.name == "last_updated" && m.kind == rawMember {
			f.top[i].raw = []byte(`"` + coord.FormatTime(now) + `"`)
		}
	}
}

// pathLockFields are the members of a path lock, in the order written.
var pathLockFields = []string{"path", "holder", "since", "task_id", "expires"}

func pathLockFieldIndex(name string) int {
	for i, f := range pathLockFields {
		if f == name {
			return i
		}
	}
	return -1
}

// parsePathLocks reads "path_locks": an array of path lock objects (null
// is an empty one). Each is checked: a clean repository path, a valid
// holder and task id, a path locked once.
func (f *Registry) parsePathLocks(s *scanner) error {
	if s.peek() == 'n' {
		return s.literal("null")
	}
	if s.peek() != '[' {
		return s.errf(`"path_locks" must be an array, found %s`, s.kindName())
	}
	seen := map[string]int{}
	return s.array(func() error {
		n := len(f.PathLocks) + 1
		if s.peek() != '{' {
			return s.errf("path lock %d must be an object, found %s", n, s.kindName())
		}
		a := s.i
		var l coord.PathLock
		err := s.objectKnown(pathLockFields, pathLockFieldIndex, func(name string, k int) error {
			var err error
			what := fmt.Sprintf("path lock %d %q", n, name)
			switch k {
			case 0:
				l.Path, err = s.strVal(what, false)
			case 1:
				l.Holder, err = s.strVal(what, false)
			case 2:
				l.Since, err = s.strVal(what, true)
			case 3:
				l.TaskID, err = s.strVal(what, true)
			case 4:
				l.Expires, err = s.strVal(what, true)
			default:
				if k := caseTwin(name, pathLockFields); k != "" {
					return s.errf("path lock %d: %q is not a field; names are case-sensitive (did you mean %q?)", n, name, k)
				}
				err = s.value()
			}
			return err
		})
		if err != nil {
			return err
		}
		if err := CheckPathLock(l); err != nil {
			return s.errf("path lock %d: %v", n, err)
		}
		if prev, dup := seen[l.Path]; dup {
			return s.errf("path lock %d: path %q is locked twice (path locks %d and %d)", n, l.Path, prev, n)
		}
		seen[l.Path] = n
		f.PathLocks = append(f.PathLocks, l)
		f.locksRaw = append(f.locksRaw, rawLock{l, s.data[a:s.i]})
		return nil
	})
}

// CheckPathLock validates a path lock read from a file: a clean
// repository path (as coord.CleanRepoPath leaves it), a valid holder, a
// valid task id if any.
func CheckPathLock(l coord.PathLock) error {
	if c, err := coord.CleanRepoPath(l.Path); err != nil || c != l.Path {
		return fmt.Errorf("path %q is not a clean repository path", clipString(l.Path))
	}
	if err := coord.ValidAgentID(l.Holder); err != nil {
		return fmt.Errorf("holder: %v", err)
	}
	if l.TaskID != "" {
		if err := coord.ValidTaskID(l.TaskID); err != nil {
			return fmt.Errorf("task_id: %v", err)
		}
	}
	return nil
}

func clipString(s string) string {
	if len(s) > 70 {
		return s[:64] + "…"
	}
	return s
}

func (f *Registry) parseTasks(s *scanner) error {
	if s.peek() == 'n' {
		return s.literal("null")
	}
	if s.peek() != '[' {
		return s.errf(`"tasks" must be an array, found %s`, s.kindName())
	}
	seen := make(map[string]int, len(s.data)/256+8)
	f.index = seen
	f.Tasks = make([]*coord.Task, 0, len(s.data)/256+8)
	var slab []coord.Task // tasks are allocated in chunks, not one by one
	return s.array(func() error {
		n := len(f.Tasks) + 1
		if s.peek() != '{' {
			return s.errf("task %d must be an object, found %s", n, s.kindName())
		}
		if len(slab) == cap(slab) {
			slab = make([]coord.Task, 0, 256)
		}
		slab = slab[:len(slab)+1]
		a := s.i
		t, err := parseTaskInto(s, n, &slab[len(slab)-1])
		if err != nil {
			return err
		}
		// One map operation per task: a duplicate leaves the size unchanged.
		size := len(seen)
		seen[t.ID] = n - 1
		if len(seen) == size {
			prev := 0
			for i, o := range f.Tasks {
				if o.ID == t.ID {
					prev = i + 1
					break
				}
			}
			return s.errf("task id %q appears twice (tasks %d and %d)", t.ID, prev, n)
		}
		t.Raw = s.data[a:s.i]
		f.Tasks = append(f.Tasks, t)
		return nil
	})
}

// parseTask decodes one task object's known fields, validating (and
// skipping) the rest.
func parseTask(s *scanner, n int) (*coord.Task, error) {
	return parseTaskInto(s, n, &coord.Task{})
}

func parseTaskInto(s *scanner, n int, t *coord.Task) (*coord.Task, error) {
	hasID, hasStatus, hasNotes := false, false, false
	var legacy string
	err := s.objectKnown(taskFieldsRead, taskFieldIndex, func(name string, k int) error {
		hasID = hasID || k == fID
		hasStatus = hasStatus || k == fStatus
		hasNotes = hasNotes || k == fReviewNotes
		var err error
		if k == fLegacyRejectReason {
			legacy, err = s.strVal(name, true)
		} else {
			err = decodeTaskField(s, t, k, name)
		}
		if err != nil {
			if pe, ok := err.(*ParseError); ok {
				pe.Msg = "task " + strconv.Itoa(n) + " " + pe.Msg
			}
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !hasID {
		return nil, s.errf(`task %d has no "id"`, n)
	}
	if !hasStatus {
		t.Status = coord.Unclaimed
	}
	if !hasNotes {
		t.ReviewNotes = legacy
	}
	if err := t.Check(); err != nil {
		return nil, s.errf("%v", err)
	}
	return t, nil
}

func decodeTaskField(s *scanner, t *coord.Task, k int, name string) error {
	var err error
	var str string
	var i int64
	switch k {
	case fID:
		t.ID, err = s.strVal(name, false)
	case fTitle:
		t.Title, err = s.strVal(name, true)
	case fStatus:
		str, err = s.strVal(name, false)
		t.Status = coord.Status(str)
	case fPriority:
		str, err = s.strVal(name, true)
		t.Priority = coord.Priority(str)
	case fDeps:
		t.Deps, err = s.strsVal(name)
	case fCapability:
		t.Capability, err = s.strVal(name, true)
	case fSkillLevel:
		str, err = s.strVal(name, true)
		t.SkillLevel = coord.SkillLevel(str)
	case fFiles:
		t.Files, err = s.strsVal(name)
	case fConflictGroup:
		t.ConflictGroup, err = s.strVal(name, true)
	case fClaimedBy:
		t.ClaimedBy, err = s.strVal(name, true)
	case fClaimedAt:
		t.ClaimedAt, err = s.strVal(name, true)
	case fCompletedAt:
		t.CompletedAt, err = s.strVal(name, true)
	case fEpoch:
		t.Epoch, err = s.intVal(name, true)
	case fProgress:
		i, err = s.intVal(name, true)
		if err == nil && i > 100 {
			err = s.errf("%s must be 0..100, found %d", name, i)
		}
		t.Progress = int(i)
	case fBlockedReason:
		t.BlockedReason, err = s.strVal(name, true)
	case fReviewerID:
		t.ReviewerID, err = s.strVal(name, true)
	case fReviewNotes:
		t.ReviewNotes, err = s.strVal(name, true)
	case fRejections:
		i, err = s.intVal(name, true)
		if err == nil && i > math.MaxInt32 {
			err = s.errf("%s must be at most %d, found %d", name, math.MaxInt32, i)
		}
		t.Rejections = int(i)
	case fReviewAlertAt:
		t.ReviewAlertAt, err = s.strVal(name, true)
	case fReviewerKind:
		t.ReviewerKind, err = s.strVal(name, true)
	case fAssignedTo:
		t.AssignedTo, err = s.strVal(name, true)
	case fAssignedAt:
		t.AssignedAt, err = s.strVal(name, true)
	case fReviewStartedAt:
		t.ReviewStartedAt, err = s.strVal(name, true)
	case fBlockedAt:
		t.BlockedAt, err = s.strVal(name, true)
	case fDescription:
		t.Description, err = s.strVal(name, true)
	case fBranch:
		t.Branch, err = s.strVal(name, true)
	case fBase:
		t.Base, err = s.strVal(name, true)
	case fTouchedFiles:
		t.TouchedFiles, err = s.strsVal(name)
		t.TouchedFiles = coord.NormalizeTouched(t.TouchedFiles)
	case fHead:
		t.Head, err = s.strVal(name, true)
	case fLandedCommit:
		t.LandedCommit, err = s.strVal(name, true)
	case fLandedAt:
		t.LandedAt, err = s.strVal(name, true)
	case fConflicts:
		t.Conflicts, err = parseConflicts(s, name)
	case fReceipts:
		t.Receipts, err = parseReceipts(s, name)
	case fReviewedCommit:
		t.ReviewedCommit, err = s.strVal(name, true)
	case fLandingAt:
		t.LandingAt, err = s.strVal(name, true)
	case fLandingOn:
		t.LandingOn, err = s.strsVal(name)
	case fPredictedFiles:
		t.PredictedFiles, err = s.strsVal(name)
	case fPredictedAt:
		t.PredictedAt, err = s.strVal(name, true)
	case fOwner:
		t.Owner, err = s.strVal(name, true)
	case fFenced:
		t.Fenced, err = s.strVal(name, true)
	case fPredictedConfidence:
		t.PredictedConfidence, err = s.floatsVal(name)
	default:
		if k := caseTwin(name, taskFieldsRead); k != "" {
			return s.errf("%q is not a field; names are case-sensitive (did you mean %q?)", name, k)
		}
		err = s.value()
	}
	return err
}

// Indexes of taskFieldOrder.
const (
	fID = iota
	fTitle
	fStatus
	fPriority
	fDeps
	fCapability
	fSkillLevel
	fFiles
	fConflictGroup
	fClaimedBy
	fClaimedAt
	fCompletedAt
	fEpoch
	fProgress
	fBlockedReason
	fReviewerID
	fReviewNotes
	fReviewerKind
	fAssignedTo
	fAssignedAt
	fReviewStartedAt
	fBlockedAt
	fDescription
	fRejections
	fReviewAlertAt
	fBranch
	fBase
	fTouchedFiles
	fHead
	fLandedCommit
	fLandedAt
	fConflicts
	fReceipts
	fReviewedCommit
	fLandingAt
	fPredictedFiles
	fPredictedAt
	fPredictedConfidence
	fOwner
	fFenced
	fLandingOn
	fLegacyRejectReason // in taskFieldsRead only
)

// taskFieldIndex is a name's position in taskFieldsRead, or -1.
func taskFieldIndex(name string) int {
	switch name {
	case "id":
		return 0
	case "title":
		return 1
	case "status":
		return 2
	case "priority":
		return 3
	case "deps":
		return 4
	case "capability":
		return 5
	case "skill_level":
		return 6
	case "files":
		return 7
	case "conflict_group":
		return 8
	case "claimed_by":
		return 9
	case "claimed_at":
		return 10
	case "completed_at":
		return 11
	case "epoch":
		return 12
	case "progress":
		return 13
	case "blocked_reason":
		return 14
	case "reviewer_id":
		return 15
	case "review_notes":
		return 16
	case "reviewer_kind":
		return 17
	case "assigned_to":
		return 18
	case "assigned_at":
		return 19
	case "review_started_at":
		return 20
	case "blocked_at":
		return 21
	case "description":
		return 22
	case "rejections":
		return 23
	case "review_alert_at":
		return 24
	case "branch":
		return 25
	case "base":
		return 26
	case "touched_files":
		return 27
	case "head":
		return 28
	case "landed_commit":
		return 29
	case "landed_at":
		return 30
	case "conflicts":
		return 31
	case "receipts":
		return 32
	case "reviewed_commit":
		return 33
	case "landing_at":
		return 34
	case "predicted_files":
		return fPredictedFiles
	case "predicted_at":
		return fPredictedAt
	case "owner":
		return fOwner
	case "fenced":
		return fFenced
	case "landing_on":
		return fLandingOn
	case "predicted_confidence":
		return fPredictedConfidence
	case legacyRejectReason:
		return fLegacyRejectReason
	}
	return -1
}

// topFields are the top-level members coord writes itself.
var topFields = []string{"version", "last_epoch", "tasks", "path_locks", "agents"}

// caseTwin returns the known name that name equals but for case, or "".
// Such a member is refused: kept as an unknown field, it would clash with
// the known one when coord writes it.
func caseTwin(name string, known []string) string {
	for _, k := range known {
		if len(k) == len(name) && k != name && strings.EqualFold(k, name) {
			return k
		}
	}
	return ""
}

// Encode renders the registry: unchanged tasks byte for byte, changed
// and new ones re-encoded with their unknown fields kept in place. One task
// per line keeps the file diff-friendly. It refuses, as EncodeTo does, a
// registry Parse would not read back.
func (f *Registry) Encode() ([]byte, error) {
	size := 64
	for _, t := range f.Tasks {
		size += len(t.Raw) + 2
		if t.Raw == nil || t.Dirty {
			size += 320
		}
	}
	for _, m := range f.top {
		size += len(m.name) + len(m.raw) + 4
	}
	size += 128 * len(f.PathLocks)
	for _, a := range f.Agents {
		size += len(a.Raw) + 256
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	if err := f.EncodeTo(buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// EncodeTo streams the encoding to w in chunks, so writing a large
// registry never holds a second copy of it in memory. "path_locks" and
// "agents" keep their place; a registry that had none gets them after
// "tasks", once there is something to write.
//
// It writes only what Parse reads back: a task written anew is parsed
// again as Parse would read it (its fields checked), every task id must
// appear once, and a path-lock or agents array with a record written anew
// is parsed again whole (each is small). An unchanged task or record is
// written as it was read, so it parses as it did. What fails is an
// *EncodeError, returned before the end of the document is written: the
// caller's commit, which only replaces the registry once the whole
// document is written, is refused. The size of the whole is the caller's
// to bound (each engine knows its reader's limit).
func (f *Registry) EncodeTo(w io.Writer) error {
	const chunk = 128 << 10
	b := make([]byte, 0, chunk+4096)
	var werr error
	flush := func(force bool) {
		if werr == nil && (force || len(b) >= chunk) {
			_, werr = w.Write(b)
			b = b[:0]
		}
	}
	if err := f.checkIDs(); err != nil {
		return err
	}
	b = append(b, '{')
	first := true
	sep := func() {
		if !first {
			b = append(b, ',')
		}
		first = false
	}
	var verr error // the first encoding that would not read back
	writeTasks := func() {
		sep()
		b = append(b, `"last_epoch":`...)
		b = strconv.AppendInt(b, f.LastEpoch, 10)
		b = append(b, `,"tasks":[`...)
		for i, t := range f.Tasks {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '\n')
			if t.Raw != nil && !t.Dirty {
				b = append(b, t.Raw...)
			} else {
				at := len(b)
				b = appendTask(b, t, t.Raw)
				if verr == nil {
					verr = checkTask(b[at:], i+1, t.ID)
				}
			}
			flush(false)
		}
		if len(f.Tasks) > 0 {
			b = append(b, '\n')
		}
		b = append(b, ']')
	}
	writeLocks := func() {
		sep()
		b = append(b, `"path_locks":`...)
		at, anew := len(b), false
		b = append(b, '[')
		for i, l := range f.PathLocks {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '\n')
			var raw bool
			b, raw = f.appendPathLock(b, l)
			anew = anew || !raw
		}
		if len(f.PathLocks) > 0 {
			b = append(b, '\n')
		}
		b = append(b, ']')
		if anew && verr == nil {
			verr = checkArray(b[at:], "path_locks", (*Registry).parsePathLocks)
		}
		flush(false)
	}
	writeAgents := func() {
		sep()
		b = append(b, `"agents":`...)
		at, anew := len(b), false
		b = append(b, '[')
		for i := range f.Agents {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '\n')
			b = appendPoolAgent(b, &f.Agents[i])
			anew = anew || f.Agents[i].Raw == nil || f.Agents[i].Dirty
		}
		if len(f.Agents) > 0 {
			b = append(b, '\n')
		}
		b = append(b, ']')
		if anew && verr == nil {
			verr = checkArray(b[at:], "agents", (*Registry).parseAgents)
		}
		flush(false)
	}
	sawTasks, sawLocks, sawAgents := false, false, false
	hadLocks, hadAgents := f.HasPathLocks(), f.HasAgents()
	for _, m := range f.top {
		switch m.kind {
		case tasksMember:
			sawTasks = true
			writeTasks()
		case locksMember:
			sawLocks = true
			writeLocks()
		case agentsMember:
			sawAgents = true
			writeAgents()
		default:
			sep()
			b = appendString(b, m.name)
			b = append(b, ':')
			b = append(b, m.raw...)
		}
		if m.kind == tasksMember && !hadLocks && len(f.PathLocks) > 0 {
			sawLocks = true
			writeLocks()
		}
		if m.kind == tasksMember && !hadAgents && len(f.Agents) > 0 {
			sawAgents = true
			writeAgents()
		}
		flush(false)
	}
	if !sawTasks {
		writeTasks()
	}
	if !sawLocks && len(f.PathLocks) > 0 {
		writeLocks()
	}
	if !sawAgents && len(f.Agents) > 0 {
		writeAgents()
	}
	if verr != nil {
		return verr // the document stays unfinished: never a registry
	}
	b = append(b, "}\n"...)
	flush(true)
	return werr
}

// EncodeError reports a registry EncodeTo refused to finish because Parse
// would not read it back: a change no coord operation should make, caught
// before it is written.
type EncodeError struct {
	Msg string
}

func (e *EncodeError) Error() string { return e.Msg }

// checkIDs makes sure every task id appears once. A task written
// unchanged is written as Parse read it from this registry, where its id
// was unique; so only a task written anew (changed or added) can bring an
// id twice, and only those are looked for among the others: for a claim,
// one comparison per task.
func (f *Registry) checkIDs() error {
	var fresh []int // positions of the tasks written anew
	for i, t := range f.Tasks {
		if t.Raw == nil || t.Dirty {
			fresh = append(fresh, i)
		}
	}
	dup := func(i, j int) error {
		return &EncodeError{fmt.Sprintf("task id %q would appear twice (tasks %d and %d)", f.Tasks[i].ID, min(i, j)+1, max(i, j)+1)}
	}
	if len(fresh) <= 8 {
		for _, i := range fresh {
			id := f.Tasks[i].ID
			for j, t := range f.Tasks {
				if j != i && len(t.ID) == len(id) && t.ID == id {
					return dup(i, j)
				}
			}
		}
		return nil
	}
	seen := make(map[string]int, len(f.Tasks))
	for i, t := range f.Tasks {
		if j, ok := seen[t.ID]; ok {
			return dup(j, i)
		}
		seen[t.ID] = i
	}
	return nil
}

// checkTask parses a task written anew as Parse reads one.
func checkTask(enc []byte, n int, id string) error {
	s := &scanner{data: enc, file: "task"}
	t, err := parseTask(s, n)
	if err == nil {
		err = s.end()
	}
	if err == nil && t.ID != id {
		err = fmt.Errorf("its id reads back as %q", t.ID)
	}
	if err != nil {
		return &EncodeError{fmt.Sprintf("task %q would not read back: %s", id, strings.TrimPrefix(err.Error(), "task: "))}
	}
	return nil
}

// checkArray parses a path-lock or agents array written anew as Parse
// reads it.
func checkArray(enc []byte, what string, parse func(*Registry, *scanner) error) error {
	s := &scanner{data: enc, file: what}
	err := parse(&Registry{}, s)
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return &EncodeError{fmt.Sprintf("%q would not read back: %s", what, strings.TrimPrefix(err.Error(), what+": "))}
	}
	return nil
}

// appendPathLock writes l as it was read if it is unchanged (raw), else
// anew.
func (f *Registry) appendPathLock(b []byte, l coord.PathLock) ([]byte, bool) {
	for _, r := range f.locksRaw {
		if r.lock == l {
			return append(b, r.raw...), true
		}
	}
	return AppendPathLock(b, l), false
}

// AppendPathLock appends l as a JSON object, its members in the order
// path, holder, since, task_id, expires (the last two only when set).
func AppendPathLock(b []byte, l coord.PathLock) []byte {
	b = append(b, `{"path":`...)
	b = appendString(b, l.Path)
	b = append(b, `,"holder":`...)
	b = appendString(b, l.Holder)
	b = append(b, `,"since":`...)
	b = appendString(b, l.Since)
	if l.TaskID != "" {
		b = append(b, `,"task_id":`...)
		b = appendString(b, l.TaskID)
	}
	if l.Expires != "" {
		b = append(b, `,"expires":`...)
		b = appendString(b, l.Expires)
	}
	return append(b, '}')
}

// NewRegistry returns an empty registry in the current format.
func NewRegistry() *Registry {
	return &Registry{top: []member{{name: "version", raw: []byte(strconv.Itoa(Version))}, {name: "tasks", kind: tasksMember}}}
}

// appendTask encodes t, keeping raw's members in their order (known ones
// replaced by t's values, unknown ones verbatim) and adding known fields
// raw lacks.
func appendTask(b []byte, t *coord.Task, raw []byte) []byte {
	b = append(b, '{')
	written := make(map[string]bool, len(taskFieldOrder))
	n := 0
	if raw != nil {
		members := Members(raw)
		hasNotes := false
		for _, m := range members {
			hasNotes = hasNotes || m.Name == "review_notes"
		}
		for _, m := range members {
			name := m.Name
			if name == legacyRejectReason {
				if hasNotes {
					continue // review_notes holds the value
				}
				name = "review_notes" // written back under its new name, in its place
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = appendString(b, name)
			b = append(b, ':')
			if isKnown(name) {
				b = appendField(b, t, name, true)
				written[name] = true
			} else {
				b = append(b, m.Raw...)
			}
		}
	}
	for _, name := range taskFieldOrder {
		if written[name] || !wantField(t, name) {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = appendString(b, name)
		b = append(b, ':')
		b = appendField(b, t, name, false)
	}
	return append(b, '}')
}

func isKnown(name string) bool {
	for _, k := range taskFieldOrder {
		if k == name {
			return true
		}
	}
	return false
}

// wantField says whether a known field absent from the original is added.
func wantField(t *coord.Task, name string) bool {
	switch name {
	case "title":
		return t.Title != ""
	case "deps":
		return len(t.Deps) > 0
	case "files":
		return len(t.Files) > 0
	case "capability":
		return t.Capability != ""
	case "skill_level":
		return t.SkillLevel != ""
	case "conflict_group":
		return t.ConflictGroup != ""
	case "review_notes":
		return t.ReviewNotes != ""
	case "rejections":
		return t.Rejections != 0
	case "review_alert_at":
		return t.ReviewAlertAt != ""
	case "reviewer_kind":
		return t.ReviewerKind != ""
	case "assigned_to":
		return t.AssignedTo != ""
	case "assigned_at":
		return t.AssignedAt != ""
	case "review_started_at":
		return t.ReviewStartedAt != ""
	case "blocked_at":
		return t.BlockedAt != ""
	case "description":
		return t.Description != ""
	case "branch":
		return t.Branch != ""
	case "base":
		return t.Base != ""
	case "touched_files":
		return len(t.TouchedFiles) > 0
	case "head":
		return t.Head != ""
	case "landed_commit":
		return t.LandedCommit != ""
	case "landed_at":
		return t.LandedAt != ""
	case "conflicts":
		return len(t.Conflicts) > 0
	case "receipts":
		return len(t.Receipts) > 0
	case "reviewed_commit":
		return t.ReviewedCommit != ""
	case "landing_at":
		return t.LandingAt != ""
	case "landing_on":
		return len(t.LandingOn) > 0
	case "predicted_files":
		return len(t.PredictedFiles) > 0
	case "predicted_at":
		return t.PredictedAt != ""
	case "owner":
		return t.Owner != ""
	case "fenced":
		return t.Fenced != ""
	case "predicted_confidence":
		return len(t.PredictedConfidence) > 0
	}
	return true
}

func appendField(b []byte, t *coord.Task, name string, present bool) []byte {
	nullable := func(s string) []byte {
		if s == "" {
			return append(b, "null"...)
		}
		return appendString(b, s)
	}
	switch name {
	case "id":
		return appendString(b, t.ID)
	case "title":
		return appendString(b, t.Title)
	case "status":
		return appendString(b, string(t.Status))
	case "priority":
		p := t.Priority
		if p == "" {
			p = coord.Medium
		}
		return appendString(b, string(p))
	case "deps":
		return appendStrings(b, t.Deps)
	case "files":
		return appendStrings(b, t.Files)
	case "capability":
		return nullable(t.Capability)
	case "skill_level":
		return nullable(string(t.SkillLevel))
	case "conflict_group":
		return nullable(t.ConflictGroup)
	case "claimed_by":
		return nullable(t.ClaimedBy)
	case "claimed_at":
		return nullable(t.ClaimedAt)
	case "completed_at":
		return nullable(t.CompletedAt)
	case "epoch":
		return strconv.AppendInt(b, t.Epoch, 10)
	case "progress":
		return strconv.AppendInt(b, int64(t.Progress), 10)
	case "blocked_reason":
		return nullable(t.BlockedReason)
	case "reviewer_id":
		return nullable(t.ReviewerID)
	case "review_notes":
		return nullable(t.ReviewNotes)
	case "rejections":
		return strconv.AppendInt(b, int64(t.Rejections), 10)
	case "review_alert_at":
		return nullable(t.ReviewAlertAt)
	case "reviewer_kind":
		return nullable(t.ReviewerKind)
	case "assigned_to":
		return nullable(t.AssignedTo)
	case "assigned_at":
		return nullable(t.AssignedAt)
	case "review_started_at":
		return nullable(t.ReviewStartedAt)
	case "blocked_at":
		return nullable(t.BlockedAt)
	case "description":
		return nullable(t.Description)
	case "branch":
		return nullable(t.Branch)
	case "base":
		return nullable(t.Base)
	case "touched_files":
		return appendStrings(b, t.TouchedFiles)
	case "head":
		return nullable(t.Head)
	case "landed_commit":
		return nullable(t.LandedCommit)
	case "landed_at":
		return nullable(t.LandedAt)
	case "conflicts":
		return appendConflicts(b, t.Conflicts)
	case "receipts":
		return appendReceipts(b, t.Receipts)
	case "reviewed_commit":
		return nullable(t.ReviewedCommit)
	case "landing_at":
		return nullable(t.LandingAt)
	case "landing_on":
		return appendStrings(b, t.LandingOn)
	case "predicted_files":
		return appendStrings(b, t.PredictedFiles)
	case "predicted_at":
		return nullable(t.PredictedAt)
	case "owner":
		return nullable(t.Owner)
	case "fenced":
		return nullable(t.Fenced)
	case "predicted_confidence":
		return appendFloats(b, t.PredictedConfidence)
	}
	return append(b, "null"...)
}

// conflictFields are the members of one of a task's conflicts, in the
// order written.
var conflictFields = []string{"with", "files", "since", "told"}

func conflictFieldIndex(name string) int {
	for i, f := range conflictFields {
		if f == name {
			return i
		}
	}
	return -1
}

// parseConflicts reads a task's "conflicts": null or an array of
// {"with", "files", "since", "told"} objects (other members are
// validated and skipped).
func parseConflicts(s *scanner, what string) ([]coord.Conflict, error) {
	if s.peek() == 'n' {
		return nil, s.literal("null")
	}
	if s.peek() != '[' {
		return nil, s.errf("%s must be an array, found %s", what, s.kindName())
	}
	var out []coord.Conflict
	err := s.array(func() error {
		if s.peek() != '{' {
			return s.errf("%s element must be an object, found %s", what, s.kindName())
		}
		var c coord.Conflict
		err := s.objectKnown(conflictFields, conflictFieldIndex, func(name string, k int) error {
			var err error
			switch k {
			case 0:
				c.With, err = s.strVal(what+" with", false)
			case 1:
				c.Files, err = s.strsVal(what + " files")
			case 2:
				c.Since, err = s.strVal(what+" since", true)
			case 3:
				switch s.peek() {
				case 't':
					c.Told, err = true, s.literal("true")
				case 'f':
					err = s.literal("false")
				case 'n':
					err = s.literal("null")
				default:
					err = s.errf("%s told must be a boolean, found %s", what, s.kindName())
				}
			default:
				if k := caseTwin(name, conflictFields); k != "" {
					return s.errf("%s: %q is not a field; names are case-sensitive (did you mean %q?)", what, name, k)
				}
				err = s.value()
			}
			return err
		})
		out = append(out, c)
		return err
	})
	return out, err
}

func appendConflicts(b []byte, cs []coord.Conflict) []byte {
	b = append(b, '[')
	for i, c := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"with":`...)
		b = appendString(b, c.With)
		b = append(b, `,"files":`...)
		b = appendStrings(b, c.Files)
		if c.Since != "" {
			b = append(b, `,"since":`...)
			b = appendString(b, c.Since)
		}
		if c.Told {
			b = append(b, `,"told":true`...)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// receiptFields are the members of one of a task's receipts, in the
// order written.
var receiptFields = []string{"tree", "cmd", "exit", "seconds", "tail", "at"}

func receiptFieldIndex(name string) int {
	for i, f := range receiptFields {
		if f == name {
			return i
		}
	}
	return -1
}

// parseReceipts reads a task's "receipts": null or an array of {"tree",
// "cmd", "exit", "seconds", "tail", "at"} objects (other members are
// validated and skipped; what the values mean is Task.Check's to judge).
func parseReceipts(s *scanner, what string) ([]coord.Receipt, error) {
	if s.peek() == 'n' {
		return nil, s.literal("null")
	}
	if s.peek() != '[' {
		return nil, s.errf("%s must be an array, found %s", what, s.kindName())
	}
	var out []coord.Receipt
	err := s.array(func() error {
		if s.peek() != '{' {
			return s.errf("%s element must be an object, found %s", what, s.kindName())
		}
		var r coord.Receipt
		err := s.objectKnown(receiptFields, receiptFieldIndex, func(name string, k int) error {
			var err error
			switch k {
			case 0:
				r.Tree, err = s.strVal(what+" tree", false)
			case 1:
				r.Cmd, err = s.strVal(what+" cmd", false)
			case 2:
				var n int64
				n, err = s.intVal(what+" exit", false)
				if err == nil && n > 255 {
					err = s.errf("%s exit must be 0..255, found %d", what, n)
				}
				r.Exit = int(n)
			case 3:
				r.Seconds, err = s.floatVal(what + " seconds")
			case 4:
				r.Tail, err = s.strVal(what+" tail", false)
			case 5:
				r.At, err = s.strVal(what+" at", false)
			default:
				if k := caseTwin(name, receiptFields); k != "" {
					return s.errf("%s: %q is not a field; names are case-sensitive (did you mean %q?)", what, name, k)
				}
				err = s.value()
			}
			return err
		})
		out = append(out, r)
		return err
	})
	return out, err
}

func appendReceipts(b []byte, rs []coord.Receipt) []byte {
	b = append(b, '[')
	for i, r := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"tree":`...)
		b = appendString(b, r.Tree)
		b = append(b, `,"cmd":`...)
		b = appendString(b, r.Cmd)
		b = append(b, `,"exit":`...)
		b = strconv.AppendInt(b, int64(r.Exit), 10)
		b = append(b, `,"seconds":`...)
		b = strconv.AppendFloat(b, r.Seconds, 'f', -1, 64)
		b = append(b, `,"tail":`...)
		b = appendString(b, r.Tail)
		b = append(b, `,"at":`...)
		b = appendString(b, r.At)
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

func appendFloats(b []byte, fs []float64) []byte {
	b = append(b, '[')
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	return append(b, ']')
}

// appendString appends s as a JSON string (valid UTF-8 is guaranteed by
// the strict reader and by OneLine for text we produce).
func appendString(b []byte, s string) []byte {
	out, _ := jsontext.AppendQuote(b, s) // invalid UTF-8 becomes U+FFFD
	return out
}

// Members splits a raw, already validated JSON object into its members,
// in order.
func Members(raw []byte) []Member {
	d := jsontext.NewDecoder(bytes.NewReader(raw))
	if _, err := d.ReadToken(); err != nil {
		return nil
	}
	var out []Member
	for d.PeekKind() == '"' {
		tok, err := d.ReadToken()
		if err != nil {
			return out
		}
		name := tok.String()
		v, err := d.ReadValue()
		if err != nil {
			return out
		}
		out = append(out, Member{name, bytes.Clone(v)})
	}
	return out
}

// TaskJSON returns a task as it stands in the registry: its original
// bytes if unchanged, else its new encoding.
func TaskJSON(t *coord.Task) []byte {
	if t.Raw != nil && !t.Dirty {
		return t.Raw
	}
	return appendTask(nil, t, t.Raw)
}

// TaskLine returns a task as one line of JSON (an archive line): its
// registry encoding, compacted if it spans lines.
func TaskLine(t *coord.Task) ([]byte, error) {
	line := bytes.Clone(TaskJSON(t))
	if bytes.IndexByte(line, '\n') < 0 {
		return line, nil
	}
	v := jsontext.Value(line)
	if err := v.Compact(); err != nil {
		return nil, err
	}
	return v, nil
}
