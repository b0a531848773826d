package nats

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ensure: a creation whose answer did not come is looked for before it is
// sent again; it is sent again while it is not found, within the budget;
// a refusal ends it at once.
func TestEnsure(t *testing.T) {
	ctx := context.Background()
	electing := &jetstream.APIError{Code: 503, ErrorCode: 10008, Description: "JetStream system temporarily unavailable"}
	refused := &jetstream.APIError{Code: 500, ErrorCode: 10047, Description: "insufficient resources"}
	for _, c := range []struct {
		name    string
		answers []error // create's answers in turn; nil after them
		found   []bool  // exists' answers in turn; false after them
		sends   int
		want    error
	}{
		{"answered", nil, nil, 1, nil},
		{"timed out, but made", []error{context.DeadlineExceeded}, []bool{true}, 1, nil},
		{"timed out, not made, sent again", []error{context.DeadlineExceeded}, []bool{false}, 2, nil},
		{"electing, then answered", []error{electing, electing}, nil, 3, nil},
		{"refused", []error{refused}, nil, 1, refused},
		{"never answered", nil, nil, -1, context.DeadlineExceeded}, // -1: every send times out
	} {
		t.Run(c.name, func(t *testing.T) {
			sends, looks := 0, 0
			create := func(ctx context.Context) error {
				if _, ok := ctx.Deadline(); !ok {
					t.Error("an attempt without a deadline")
				}
				sends++
				if c.sends < 0 {
					return context.DeadlineExceeded
				}
				if sends <= len(c.answers) {
					return c.answers[sends-1]
				}
				return nil
			}
			exists := func(context.Context) bool {
				looks++
				return looks <= len(c.found) && c.found[looks-1]
			}
			budget := time.Minute
			if c.sends < 0 {
				budget = 50 * time.Millisecond
			}
			err := ensure(ctx, budget, time.Second, create, exists)
			if !errors.Is(err, c.want) {
				t.Fatalf("ensure: %v, want %v", err, c.want)
			}
			if c.sends >= 0 && sends != c.sends {
				t.Fatalf("%d sends, want %d", sends, c.sends)
			}
			if c.sends < 0 && looks != sends {
				t.Fatalf("%d sends, %d looks: each unanswered send is looked for", sends, looks)
			}
		})
	}
}
