package mcpserver

// idScanner finds the "id" member of a JSON object streamed past it in
// pieces, holding at most a few hundred bytes whatever the object's size:
// what lets the framer answer an oversized request by its id, so that
// the client's call ends with an error instead of waiting for an answer
// that never comes (clients put "id" anywhere, often after "params").
//
// It looks only at the top-level object's members, takes the first member
// named exactly "id" (a name written with escapes is not matched), and
// keeps its value when it is a string or a number of at most maxIDBytes
// bytes; anything else (null, an object, a value cut short, input that is
// not an object) leaves id nil. It never fails: on input it does not
// understand it stops looking.
type idScanner struct {
	started bool
	depth   int  // 1 inside the top-level object, more inside a member's value
	inStr   bool // inside a string (a name or a value) at any depth
	esc     bool // after a backslash inside a string
	state   int
	key     []byte
	keyOK   bool // the name so far is plain and short enough to be "id"
	isID    bool // the member whose value comes is "id"
	val     []byte
	id      []byte // the raw value found
	done    bool
}

const maxIDBytes = 256

// The scanner's states at depth 1.
const (
	sName   = iota // expecting a member name (or the end)
	sInName        // inside a member name
	sColon         // after a name, expecting ':'
	sValue         // expecting a value
	sScalar        // inside a number, true, false or null not kept
	sIDStr         // inside the id's string
	sIDNum         // inside the id's number
	sNext          // after a value, expecting ',' or the end
)

// feed scans the next piece of the input.
func (s *idScanner) feed(p []byte) {
	for _, c := range p {
		if s.done {
			return
		}
		s.step(c)
	}
}

func (s *idScanner) keep(c byte) {
	s.val = append(s.val, c)
	if len(s.val) > maxIDBytes {
		s.done = true // too long to be an id worth echoing
	}
}

func (s *idScanner) found() {
	s.id = s.val
	s.done = true
}

func (s *idScanner) step(c byte) {
	if s.inStr {
		if s.state == sIDStr {
			s.keep(c)
		}
		switch {
		case s.esc:
			s.esc = false
		case c == '\\':
			s.esc = true
			if s.state == sInName {
				s.keyOK = false
			}
		case c == '"':
			s.inStr = false
			switch s.state {
			case sInName:
				s.state = sColon
			case sIDStr:
				s.found()
			}
		case s.state == sInName:
			if len(s.key) < len("id") {
				s.key = append(s.key, c)
			} else {
				s.keyOK = false
			}
		}
		return
	}
	if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
		if s.state == sIDNum {
			s.found()
		}
		return
	}
	if !s.started {
		s.started = true
		if c != '{' {
			s.done = true
			return
		}
		s.depth, s.state = 1, sName
		return
	}
	if s.depth > 1 { // inside a member's value: skip it
		switch c {
		case '"':
			s.inStr = true
		case '{', '[':
			s.depth++
		case '}', ']':
			if s.depth--; s.depth == 1 {
				s.state = sNext
			}
		}
		return
	}
	switch s.state {
	case sName:
		if c != '"' {
			s.done = true // the end of the object, or not JSON: no id
			return
		}
		s.inStr, s.state, s.key, s.keyOK = true, sInName, s.key[:0], true
	case sColon:
		if c != ':' {
			s.done = true
			return
		}
		s.isID = s.keyOK && string(s.key) == "id"
		s.state = sValue
	case sValue:
		switch {
		case s.isID && c == '"':
			s.inStr, s.state, s.val = true, sIDStr, nil
			s.keep(c)
		case s.isID && (c == '-' || c >= '0' && c <= '9'):
			s.state, s.val = sIDNum, nil
			s.keep(c)
		case s.isID:
			s.done = true // null, an object …: no id to answer by
		case c == '"':
			s.inStr, s.state = true, sNext
		case c == '{' || c == '[':
			s.depth++
		default:
			s.state = sScalar
		}
	case sScalar:
		switch c {
		case ',':
			s.state = sName
		case '}':
			s.done = true
		}
	case sIDNum:
		if c == ',' || c == '}' {
			s.found()
			return
		}
		s.keep(c)
	case sNext:
		if c != ',' {
			s.done = true
			return
		}
		s.state = sName
	}
}
