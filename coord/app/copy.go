package app

import (
	"context"

	"github.com/rotd/coordination/coord"
)

// CopyResult is what Copy moved.
type CopyResult struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Tasks    int    `json:"tasks"`
	Leases   int    `json:"leases"`
	Keys     int    `json:"keys"`
	LogLines int    `json:"log_lines"`
	Archived int    `json:"archived"`
}

// Copy moves a whole project from one backend to another (docs/MANY-MACHINES.md):
// tasks, the dependency map, claims with their epochs, path locks,
// leases, kv, quota, the log and the archive, so that both read the same.
// The destination must be empty of tasks, leases and keys (CodeConflict,
// nothing written); both engines must be able to (coord.Porter).
func Copy(ctx context.Context, from, to coord.Backend) (CopyResult, error) {
	res := CopyResult{From: from.Where(), To: to.Where()}
	if from.Name() == to.Name() && from.Where() == to.Where() {
		return res, coord.Errorf(coord.CodeUsage, "backend copy: %s is both the source and the destination", from.Where())
	}
	src, ok1 := from.(coord.Porter)
	dst, ok2 := to.(coord.Porter)
	if !ok1 || !ok2 {
		return res, coord.Errorf(coord.CodeUsage, "backend copy: the %s engine cannot copy to the %s engine", from.Name(), to.Name())
	}
	snap, err := src.Export(ctx)
	if err != nil {
		return res, interrupted(ctx, err)
	}
	if err := dst.Import(ctx, snap); err != nil {
		return res, interrupted(ctx, err)
	}
	err = to.Tasks().View(ctx, func(tx *coord.Txn) error { res.Tasks = len(tx.Tasks); return nil })
	res.Leases, res.Keys, res.LogLines, res.Archived = len(snap.Leases), len(snap.KV), len(snap.Log), len(snap.Archive)
	return res, interrupted(ctx, err)
}
