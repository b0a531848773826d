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
	// prefix, named paths, identifiers in contents, co-change; WNew
	// (0 or not) turns the prediction of new files on (newfiles.go).
	WText, WScope, WName, WIdent, WCo, WNew float64

	// Seeds is how many of the best files co-change starts from.
	Seeds int
	// MaxCoFiles leaves changes of more files out of co-change counts.
	MaxCoFiles int

	// PairSim: two tasks of a batch whose texts are at least this
	// similar (cosine of their tf-idf vectors) share their best file; 0
	// turns pairing off.
	PairSim float64
	// Cap and CapSlack bound the sum of a file's probabilities over a
	// batch: Cap times its share of recent changes times the batch's
	// size, plus CapSlack; Cap 0 (the default) turns the bound off. On
	// a re-plan the tasks left are those held back, so a bound by the
	// file's share lowers the very predictions that keep them apart
	// (measured: more conflicts); it stays for the ablation.
	Cap, CapSlack float64
	// HotShare: a file changed by at least this share of the
	// informative changes is hot, and judged by the task's kind (how
	// often changes of that kind touched it) as much as by its words;
	// 0 turns it off.
	HotShare float64

	// A path is predicted when its probability is at least MinP and at
	// least RelScore times the task's best; at most MaxPaths.
	MinP     float64
	RelScore float64
	MaxPaths int
}

// DefaultParams are the measured defaults (coordbench -plan). The
// thresholds are low: a weak prediction is shown, and the scheduler
// weighs it by its probability, so it costs little.
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
	WNew:           1,
	Seeds:          3,
	MaxCoFiles:     20,
	PairSim:        0.3,
	Cap:            0,
	CapSlack:       1,
	HotShare:       0.1,
	MinP:           0.05,
	RelScore:       0.2,
	MaxPaths:       6,
}
