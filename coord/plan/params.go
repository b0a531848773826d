package plan

// Params are the predictor's weights and thresholds. DefaultParams holds
// the values chosen by measurement (coordbench -plan, on earlier windows
// of the replayed histories as well as the reported one); the fields
// exist so that the benchmark can switch each signal off in turn.
type Params struct {
	// HalfLife is the age, in commits, at which a commit's evidence
	// counts half: recent habits matter more than old ones.
	HalfLife float64
	// SubjectWeight is how much a subject word counts against a body
	// word.
	SubjectWeight float64
	// FinishedWeight is the weight of a finished task of the project
	// (the newest commit's is 1).
	FinishedWeight float64

	// Neighbours is how many of the most similar past changes vote.
	Neighbours int
	// TextPrior damps the similar changes' vote when they are few or
	// weakly similar (a pseudo-count of unrelated evidence).
	TextPrior float64
	// ScopePrior does the same for changes sharing the task's prefix.
	ScopePrior float64
	// CoPrior does the same for co-change.
	CoPrior float64

	// The weight of each signal (0 turns it off): similar changes,
	// prefix, named paths, identifiers in contents, co-change.
	WText, WScope, WName, WIdent, WCo float64

	// Seeds is how many of the best files co-change starts from.
	Seeds int
	// MaxCoFiles leaves changes of more files out of co-change counts.
	MaxCoFiles int

	// PairSim: two tasks of a batch whose texts are at least this
	// similar (cosine of their tf-idf vectors) share their best file; 0
	// turns pairing off.
	PairSim float64
	// Cap and CapSlack bound how many tasks of a batch a file is
	// predicted for: Cap times its share of recent changes times the
	// batch's size, plus CapSlack; Cap 0 turns the bound off.
	Cap, CapSlack float64
	// HotCap bounds every file's share of the batch to HotCap times the
	// largest share any file has of recent changes (0: no bound), so no
	// predicted chain of tasks outgrows the longest real one by much.
	HotCap float64

	// A path is predicted when its score is at least MinScore and at
	// least RelScore times the task's best; at most MaxPaths.
	MinScore float64
	RelScore float64
	MaxPaths int
}

// DefaultParams are the measured defaults. The thresholds are low and
// the caps generous because the caps, not the scores, bound the cost of
// a wrong prediction: a file predicted for a few tasks too many costs
// little parallelism, a hot file predicted for half the batch costs a
// great deal (see the ablation in the report of issue 26).
var DefaultParams = Params{
	HalfLife:       1000,
	SubjectWeight:  2,
	FinishedWeight: 1,
	Neighbours:     20,
	TextPrior:      0.5,
	ScopePrior:     2,
	CoPrior:        2,
	WText:          1,
	WScope:         1,
	WName:          1,
	WIdent:         1,
	WCo:            0.5,
	Seeds:          3,
	MaxCoFiles:     20,
	PairSim:        0.3,
	Cap:            2.5,
	CapSlack:       1,
	HotCap:         2,
	MinScore:       0.05,
	RelScore:       0.3,
	MaxPaths:       6,
}
