// Package plan predicts, before a line is written, which files a task will
// touch and how likely each is, so that coord can weigh the risk that
// tasks in flight at once collide. It is coord's planning model and does
// no I/O: it takes plain data (the history's commits, the current tree's
// paths, optionally the identifiers in the files, the project's finished
// tasks with the paths they touched) and returns, for each task, paths
// most likely first, each with a score, a probability and the reasons it
// was chosen. A task that declares files gets none: its declared files
// replace its predictions.
//
// What speaks for a file (each signal weighed by Params):
//   - similar changes: the past commits whose messages most resemble the
//     task (tf-idf cosine; subject words count double; a version number is
//     a word of its own) vote for the files they touched, by similarity
//     and recency, a commit of many files less for each;
//   - the prefix: commits whose subjects carry the task's prefix
//     ("printer:", "fix(replica):") vote by the share of them that touched
//     each file;
//   - named paths: a path, file name or stem the text names;
//   - identifiers: a file whose content holds an identifier the text
//     names (parseWidth, MAX_LEN, or a word written as a call, flush();
//     Named lists them for a batch, and the caller passes the files
//     holding them as Input.Idents);
//   - co-change: the files that change with the best candidates;
//   - the batch: tasks whose texts nearly match share their best file.
//
// Probabilities (calibrate.go): the history's scores are measured on the
// repository's own newest changes, each predicted from the rest, and
// fitted to what they really touched; a history too short to measure (one
// bulk commit, a young repository) predicts in proportion to its length.
// A hot file (changed by at least HotShare of the changes: a changelog, a
// lockfile) is judged by the share of past changes with the task's
// prefix and kind that touched it, not by the task's words.
//
// New files (newfiles.go): when most of the changes most like a task
// added a file in one folder, the task is predicted to add one there,
// named after its distinctive words, and a task of the batch naming the
// same words is predicted to touch it.
//
// Promises: only paths of the current tree are predicted, and the new
// files above; a path renamed in the history counts under its current
// name, and a deleted path's
// history never counts for a new file of the same name; no path is chosen
// for its name (paths tied at the last place are left out together); the
// result is deterministic; a Model is read-only once built.
//
// An Index keeps the commits between runs (Save and Load over an
// io.Writer and io.Reader, keyed by the head it was built at) so that a
// run reads only the commits made since (Update); package gitrepo reads
// them from git.
package plan
