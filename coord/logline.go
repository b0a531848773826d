package coord

import (
	"strconv"
	"strings"
	"time"
)

// LogSep separates the agent from the message in a log line.
const LogSep = " ▶ "

// FormatLogLine renders an event as one log line without its newline:
// "[2025-07-06T12:34:01Z] agent-a ▶ claimed task 4.2". The text goes
// through OneLine, and so does the agent (with blanks made '_'; a valid
// agent id is unchanged), so whatever an event holds, the line is one
// line that ParseLogLine reads back to the same agent and text.
func FormatLogLine(e Event) string {
	return "[" + FormatTime(e.Time) + "] " + logAgent(e.Agent) + LogSep + OneLine(e.Text)
}

// MaxLogLine is the longest log line a reader takes (a longer one is
// skipped as foreign, without being held whole). No writer writes one:
// LogLines refuses it.
const MaxLogLine = 1 << 20

// LogLines renders events as log lines, each ending in a newline, ready
// for one append. It refuses (CheckLogLine) a line no reader would take
// back. A message of MaxNote bytes or less always makes a line it takes.
func LogLines(where string, events []Event) ([]byte, error) {
	var b []byte
	for _, e := range events {
		line := FormatLogLine(e)
		if err := CheckLogLine(where, line); err != nil {
			return nil, err
		}
		b = append(b, line...)
		b = append(b, '\n')
	}
	return b, nil
}

// CheckLogLine refuses (Unreadable, naming where) a log line no reader
// would take back: longer than MaxLogLine, or not parsing as a log line.
func CheckLogLine(where, line string) error {
	if len(line) > MaxLogLine {
		return Unreadable(where, "a log line of "+strconv.Itoa(len(line))+" bytes, more than the "+strconv.Itoa(MaxLogLine)+" a reader takes").
			WithHint("shorten the message (at most %d bytes)", MaxNote)
	}
	if _, _, _, ok := splitLogLine(line); !ok {
		return Unreadable(where, "a log line that does not read back as one: "+Clip(OneLine(line), 80))
	}
	return nil
}

// logAgent makes an agent name fit a log line: sanitised, without blanks,
// never empty.
func logAgent(a string) string {
	a = strings.Map(func(r rune) rune {
		if r == ' ' {
			return '_'
		}
		return r
	}, OneLine(a))
	if a == "" {
		return "-"
	}
	return a
}

// LogEntry is a parsed log line in the shape of ROTD's
// coordination_log.schema.json.
type LogEntry struct {
	Timestamp string         `json:"timestamp"`
	AgentID   string         `json:"agent_id"`
	EventType string         `json:"event_type"`
	Message   string         `json:"message"`
	TaskID    *string        `json:"task_id,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// ParseLogLine parses one log line; ok is false for a torn or foreign line.
// The agent and message are returned sanitised by OneLine: a line written
// by hand or by an older coord shows the same text in 'log' and
// 'log --json', and none of it can act on a terminal.
func ParseLogLine(line string) (LogEntry, bool) {
	var e LogEntry
	ts, agent, msg, ok := splitLogLine(line)
	if !ok {
		return e, false
	}
	e.Timestamp, e.AgentID, e.Message = ts, agent, msg
	e.EventType, e.TaskID, e.Metadata = classify(e.Message)
	return e, true
}

// splitLogLine is ParseLogLine without the classification.
func splitLogLine(line string) (ts, agent, msg string, ok bool) {
	if len(line) < 23 || line[0] != '[' || line[21] != ']' || line[22] != ' ' {
		return "", "", "", false
	}
	ts = line[1:21]
	if _, err := time.Parse(TimeFormat, ts); err != nil {
		return "", "", "", false
	}
	rest := line[23:]
	i := strings.Index(rest, LogSep)
	if i <= 0 {
		return "", "", "", false
	}
	agent, msg = rest[:i], rest[i+len(LogSep):]
	if strings.ContainsAny(agent, " \t") {
		return "", "", "", false
	}
	if agent = OneLine(agent); agent == "" || strings.ContainsAny(agent, " \t") {
		return "", "", "", false
	}
	return ts, agent, OneLine(msg), true
}

// CleanLogLine parses one log line and returns it as FormatLogLine would
// write its event: the line itself when it is already clean, else with its
// agent and message sanitised. ok is false for a torn or foreign line.
// Every reader that prints log lines (log, log -f, top) goes through it.
func CleanLogLine(line string) (string, bool) {
	ts, agent, msg, ok := splitLogLine(line)
	if !ok {
		return "", false
	}
	rest := line[23:]
	if a := len(agent); len(rest) == a+len(LogSep)+len(msg) &&
		rest[:a] == agent && rest[a+len(LogSep):] == msg {
		return line, true // already clean
	}
	return "[" + ts + "] " + agent + LogSep + msg, true
}

// classify maps a message to a ROTD event type, the task it names and any
// metadata. Messages are produced by this package, so prefixes are stable.
func classify(msg string) (string, *string, map[string]any) {
	word := func(prefix string) *string {
		rest := strings.TrimPrefix(msg, prefix)
		if j := strings.IndexAny(rest, " :"); j >= 0 {
			rest = rest[:j]
		}
		if ValidTaskID(rest) != nil {
			return nil
		}
		return &rest
	}
	for _, k := range []struct{ prefix, typ string }{
		{"claimed task ", "task_claimed"},
		{"released task ", "task_completed"},
		{"submitted for review task ", "task_review"},
		{"blocked task ", "task_blocked"},
		{"unblocked task ", "task_unblocked"},
		{"approved task ", "task_approved"},
		{"rejected task ", "task_review"},
		{"archived task ", "task_completed"},
		{"freed stale lock task ", "lock_stale"},
		{"requeued task ", "task_released"},
	} {
		if strings.HasPrefix(msg, k.prefix) {
			var meta map[string]any
			if k.typ == "task_blocked" {
				if j := strings.Index(msg, ": "); j >= 0 {
					meta = map[string]any{"blocked_reason": msg[j+2:]}
				}
			}
			return k.typ, word(k.prefix), meta
		}
	}
	if strings.HasPrefix(msg, "alert: task ") { // a scheduler's alert about a task
		return "warning", word("alert: task "), nil
	}
	if strings.HasPrefix(msg, "progress task ") {
		id := word("progress task ")
		var meta map[string]any
		f := strings.Fields(strings.TrimPrefix(msg, "progress task "))
		if len(f) >= 2 {
			if n, err := strconv.Atoi(strings.TrimRight(strings.TrimSuffix(f[1], "%:"), "%")); err == nil {
				meta = map[string]any{"progress_percent": n}
			}
		}
		return "progress_update", id, meta
	}
	for _, k := range []struct{ prefix, typ string }{
		{"locked file ", "lock_acquired"},
		{"unlocked file ", "lock_released"},
		{"repaired: ", "warning"},
		{"reconciled: ", "warning"},
		{"error: ", "error"},
	} {
		if strings.HasPrefix(msg, k.prefix) {
			return k.typ, nil, nil
		}
	}
	return "message", nil, nil
}

// NamesTask reports whether a log message is about task id: coord's own
// events name a task as "task <id>" (claimed task 4.2, assigned task 4.2
// to b, alert: task 4.2 waits …), followed by the end of the message, a
// blank or punctuation, never by more of an id ("task 4.2" is not about
// 4.21).
func NamesTask(msg, id string) bool {
	if id == "" {
		return false
	}
	word := "task " + id
	for i := 0; ; {
		j := strings.Index(msg[i:], word)
		if j < 0 {
			return false
		}
		end := i + j + len(word)
		if end == len(msg) || !idByte(msg[end]) || (msg[end] == '.' && (end+1 == len(msg) || !idByte(msg[end+1]))) {
			return true
		}
		i = end
	}
}

// idByte reports whether c may stand inside a task id.
func idByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// ClaimedEpoch returns the epoch a claim line records ("claimed task 4.2
// (epoch 17)", as Claim logs it); ok is false for any other line.
func ClaimedEpoch(line string) (int64, bool) {
	_, _, msg, ok := splitLogLine(line)
	if !ok || !strings.HasPrefix(msg, "claimed task ") || !strings.HasSuffix(msg, ")") {
		return 0, false
	}
	i := strings.LastIndex(msg, " (epoch ")
	if i < 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(msg[i+len(" (epoch "):len(msg)-1], 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}
