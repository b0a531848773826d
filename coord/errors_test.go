package coord

import (
	"errors"
	"testing"
)

func TestErrorMessage(t *testing.T) {
	for _, c := range []struct {
		err  *Error
		want string
	}{
		{&Error{Code: CodeIO, Msg: "cannot write x", Err: errors.New("no space left on device"), Hint: "free some space"},
			"cannot write x: no space left on device; free some space"},
		{&Error{Code: CodeInterrupted, Msg: "interrupted", Err: ErrInterrupted}, "interrupted"}, // not "interrupted: interrupted"
		{Errorf(CodeConflict, "task %q is held by %s", "t1", "a").WithHint("pick another"), `task "t1" is held by a; pick another`},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
		if c.err.Err != nil && !errors.Is(c.err, c.err.Err) {
			t.Errorf("%q does not unwrap to %v", c.err.Error(), c.err.Err)
		}
	}
}
