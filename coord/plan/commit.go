package plan

import "time"

// A Change is what one commit did to one path, as git's --name-status
// reports it with rename detection (-M).
type Change struct {
	// Status is 'A' (added), 'M' (modified), 'D' (deleted), 'R'
	// (renamed from From), 'C' (copied from From) or 'T' (type changed).
	Status byte
	// Path is the path after the commit (for a deletion, the path that
	// was deleted).
	Path string
	// From is the path before a rename or copy; "" otherwise.
	From string
}

// A Commit is one commit of the history the predictor learns from. Only
// what a planner could know of a task is kept: the message, the date and
// the paths it changed. A finished task of the project is given the
// same shape (its title as Subject, its description as Body, its
// touched files as modifications).
type Commit struct {
	Hash    string
	Time    time.Time
	Subject string
	Body    string
	Changes []Change
}

// maxBody bounds the part of a message body the index keeps: the first
// paragraphs carry what a task says; the rest (logs, trailers) costs
// room and adds noise.
const maxBody = 2000

// trimBody cuts s to at most maxBody bytes at a rune boundary.
func trimBody(s string) string {
	if len(s) <= maxBody {
		return s
	}
	i := maxBody
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i]
}
