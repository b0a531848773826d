package coord

import (
	"testing"
	"time"
)

func TestTxn_StartLandingOn(t *testing.T) {
	tx := &Txn{Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Tasks: []*Task{
		{ID: "a", Status: Done, Head: "1111111111111111111111111111111111111111", ClaimedBy: "x"},
		{ID: "b", Status: Done, Head: "2222222222222222222222222222222222222222", ClaimedBy: "y"},
	}}
	if tx.StartLandingOn("b", "3333333333333333333333333333333333333333", []string{"a"}, false) {
		t.Fatal("started landing a head the task does not have")
	}
	if !tx.StartLandingOn("a", tx.Tasks[0].Head, nil, false) || !tx.StartLandingOn("b", tx.Tasks[1].Head, []string{"a"}, false) {
		t.Fatal("not started")
	}
	rows := tx.LandingQueue(false)
	if len(rows) != 2 || rows[0].Why != "" || rows[1].Why != "on top of a" || len(rows[1].On) != 1 {
		t.Fatalf("rows %+v", rows)
	}
	if tx.ClearLanding() != 2 || tx.Tasks[1].LandingOn != nil {
		t.Fatalf("not cleared: %+v", tx.Tasks[1])
	}
}

func TestSharesFiles(t *testing.T) {
	for _, c := range []struct {
		a, b []string
		want bool
	}{{nil, []string{"x"}, false}, {[]string{"x", "y"}, []string{"z"}, false}, {[]string{"x", "y"}, []string{"z", "y"}, true}} {
		if got := SharesFiles(c.a, c.b); got != c.want {
			t.Errorf("SharesFiles(%v, %v) = %v", c.a, c.b, got)
		}
	}
}
