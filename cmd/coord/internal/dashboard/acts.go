package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// The page's writes (docs/COMMANDS.md#supervising): POST /api/tasks/ID/ACTION with a JSON
// body, as the dashboard's user. Each is let through only when all of
// these hold, checked in this order, each with its own answer:
//
//   - the request names no other origin than the dashboard's own
//     (Origin, when sent, is http(s)://Host): 403. A browser sends
//     Origin with every cross-origin POST, so another site's page cannot
//     act, with or without the user's credentials;
//   - it carries the token in "Authorization: Bearer T", compared in
//     constant time: 401. No cookie and no query string is read for a
//     write, so nothing a browser attaches by itself (a cookie, a link
//     followed) can authorise one, and a foreign page cannot set the
//     header without a CORS preflight, which is never granted;
//   - with Options.LoopbackOnly, its Host is a loopback name: 403 (DNS
//     rebinding);
//   - its body is JSON (Content-Type application/json): 415, so the
//     forms and text a page may send without a preflight are refused;
//     at most maxActBody bytes (413), one object with only reason, to
//     and reviewer (400).
//
// Then the act runs through Options.Acts (app.Supervisor: the domain's
// rules, the supervisors list, the text bounds) and the answer is JSON:
// {"message": …, "task": …} (200), or {"code": N, "name": …, "message":
// …} with the exit code's meaning as an HTTP status.

// maxActBody bounds an action's body: a reason is at most coord.MaxNote
// (4 KiB), which JSON escapes may make six times longer.
const maxActBody = 32 << 10

// actBody is an action's JSON body.
type actBody struct {
	Reason   string `json:"reason"`
	To       string `json:"to"`
	Reviewer string `json:"reviewer"`
}

// acts are the actions, by the last element of their path.
var acts = map[string]func(Actor, context.Context, app.Act) (app.ActResult, error){
	"requeue": Actor.Requeue,
	"assign":  Actor.Assign,
	"unblock": Actor.Unblock,
	"cancel":  Actor.Cancel,
	"approve": Actor.Approve,
	"reject":  Actor.Reject,
}

// actError is a refused write, as the page and scripts read it.
type actError struct {
	Code    int    `json:"code"` // the exit code the CLI would give (0 for a refusal of the request itself)
	Name    string `json:"name"`
	Message string `json:"message"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// refuse answers a write refused before it reached the application.
func refuse(w http.ResponseWriter, status int, name, msg string) {
	writeJSON(w, status, actError{Name: name, Message: msg})
}

// SameOrigin reports whether an Origin header names the origin of a
// request made to host (its Host header): http or https, the same host
// and port. "null" (a sandboxed frame, a file) names no origin of ours.
func SameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.User != nil {
		return false
	}
	return strings.EqualFold(u.Host, host)
}

// serveAct is POST /api/tasks/{id}/{action}.
func (s *Server) serveAct(w http.ResponseWriter, r *http.Request) {
	if o, ok := r.Header["Origin"]; ok && (len(o) != 1 || !SameOrigin(o[0], r.Host)) {
		refuse(w, http.StatusForbidden, "origin", "403 forbidden: a write from another origin ("+coord.Clip(coord.OneLine(strings.Join(o, " ")), 80)+") is refused")
		return
	}
	got, ok := bearer(r)
	if status, msg := s.checkToken(w, r, got, ok); status == http.StatusTooManyRequests {
		refuse(w, status, "rate", msg)
		return
	} else if status != 0 {
		refuse(w, status, "token", "401 unauthorized: a write needs the dashboard's token as 'Authorization: Bearer T' (never a cookie or ?token=)")
		return
	}
	if s.opt.LoopbackOnly && !LoopbackHost(r.Host) {
		refuse(w, http.StatusForbidden, "host", "403 forbidden: this dashboard answers only to a loopback host name (localhost, 127.0.0.1, [::1])")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		refuse(w, http.StatusUnsupportedMediaType, "content-type", "415 unsupported media type: send the action as JSON (Content-Type: application/json)")
		return
	}
	do, known := acts[r.PathValue("action")]
	if !known {
		refuse(w, http.StatusNotFound, "action", "404 no such action: use requeue, assign, unblock, cancel, approve or reject")
		return
	}
	var body actBody
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxActBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(&body)
	if err == nil {
		if _, extra := dec.Token(); extra != io.EOF {
			err = errors.New("trailing data after the object")
		}
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			refuse(w, http.StatusRequestEntityTooLarge, "size", "413 the body is larger than 32 KiB")
			return
		}
		refuse(w, http.StatusBadRequest, "usage", "400 the body must be one JSON object with reason, to, reviewer: "+coord.Clip(coord.OneLine(err.Error()), 120))
		return
	}
	res, err := do(s.opt.Acts, r.Context(), app.Act{By: s.opt.User, TaskID: r.PathValue("id"), Reason: body.Reason, To: body.To, Reviewer: body.Reviewer})
	if err != nil {
		code := coord.CodeOf(err)
		writeJSON(w, actStatus(err), actError{Code: int(code), Name: code.Name(), Message: coord.OneLine(err.Error())})
		return
	}
	s.opt.Logf("%s: %s", s.opt.User, res.Message)
	// The page shows the act at once: a snapshot with it is published
	// (the event stream carries it) before the answer, so a page that
	// reloads on it (the task page) finds it too.
	if err := s.Build(r.Context()); err != nil {
		s.opt.Logf("cannot read the state after %s: %v", r.PathValue("action"), err)
	}
	writeJSON(w, http.StatusOK, struct {
		Message string          `json:"message"`
		Task    json.RawMessage `json:"task"`
	}{res.Message, s.opt.TaskJSON(res.Task)})
}

// actStatus is the HTTP status of a refused act: the exit code's meaning.
func actStatus(err error) int {
	switch code := coord.CodeOf(err); {
	case errors.Is(err, coord.ErrNotSupervisor):
		return http.StatusForbidden
	case code == coord.CodeUsage:
		return http.StatusBadRequest
	case code == coord.CodeConflict, code == coord.CodeLost:
		return http.StatusConflict
	}
	return http.StatusServiceUnavailable // the backend failed or timed out: try again
}
