package nats

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// TestAPIErrors: the server's answers decode into nats.go's
// *jetstream.APIError, and the engine tells them apart by nats.go's code
// values: a refused compare-and-set (single or replicated stream), a
// missing stream or message, and the answers that go away by themselves.
func TestAPIErrors(t *testing.T) {
	decode := func(code int) *jetstream.APIError {
		var ack pubAck
		if err := json.Unmarshal(fmt.Appendf(nil, `{"error":{"code":400,"err_code":%d,"description":"d"}}`, code), &ack); err != nil || ack.Error == nil {
			t.Fatalf("decode %d: %+v %v", code, ack, err)
		}
		return ack.Error
	}
	for _, c := range []struct {
		code      int
		conflict  bool // a refused compare-and-set
		transient bool
	}{
		{10071, true, false},
		{10164, true, false},
		{10008, false, true},
		{10004, false, true},
		{10063, false, true},
		{10163, false, true},
		{10059, false, false},
		{10077, false, false},
	} {
		ae := decode(c.code)
		conflict := isAPI(ae, jetstream.JSErrCodeStreamWrongLastSequence, jetstream.JSErrCodeStreamWrongLastSequenceConstant)
		if conflict != c.conflict || transient(ae) != c.transient {
			t.Errorf("err_code %d: conflict %v transient %v, want %v %v", c.code, conflict, transient(ae), c.conflict, c.transient)
		}
		if unanswered(ae) != (c.code == 10008) {
			t.Errorf("err_code %d: unanswered %v", c.code, unanswered(ae))
		}
	}
	if !isAPI(fmt.Errorf("wrapped: %w", decode(10059)), jetstream.JSErrCodeStreamNotFound) {
		t.Error("a wrapped stream-not-found is not told apart")
	}
	if isAPI(context.DeadlineExceeded, jetstream.JSErrCodeStreamNotFound) {
		t.Error("a timeout read as an API error")
	}
}
