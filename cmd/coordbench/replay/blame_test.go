package replay

import "testing"

// TestBlame: the file two conflicting tasks met in is blamed once per
// pair, with whether each task had it predicted and whether one of them
// added it.
func TestBlame(t *testing.T) {
	cs := []Commit{
		{Subject: "a", Files: []FileChange{{Path: "x.go", Status: "M", Hunks: [][2]int{{1, 2}}}, {Path: "y.go", Status: "M", Hunks: [][2]int{{1, 1}}}}},
		{Subject: "b", Files: []FileChange{{Path: "x.go", Status: "M", Hunks: [][2]int{{2, 1}}}, {Path: "y.go", Status: "M", Hunks: [][2]int{{40, 1}}}}},
		{Subject: "c", Files: []FileChange{{Path: "z.go", Status: "A"}}},
		{Subject: "d", Files: []FileChange{{Path: "z.go", Status: "M", Hunks: [][2]int{{3, 1}}}}},
	}
	work := Works(cs)
	pred := []Predicted{{Files: []string{"x.go"}, P: []float64{0.5}}, {}, {}, {Files: []string{"z.go"}, P: []float64{0.25}}}
	bs := Blame(work, [][2]string{{"t001", "t002"}, {"t003", "t004"}}, pred)
	if len(bs) != 2 {
		t.Fatalf("blamed %+v, want x.go and z.go", bs)
	}
	x, z := bs[0], bs[1]
	if x.Path != "x.go" || x.Pairs != 1 || x.One != 1 || x.Whole != 0 || x.MeanP != 0.25 {
		t.Errorf("x.go: %+v", x)
	}
	if z.Path != "z.go" || z.Pairs != 1 || z.One != 1 || z.Whole != 1 {
		t.Errorf("z.go: %+v", z)
	}
	if got := TaskBlame(work, [][2]string{{"t001", "t002"}, {"t001", "t004"}}); len(got) != 3 || got[0][:8] != "002 t001" {
		t.Errorf("TaskBlame: %q", got)
	}
}
