// Package plan predicts, before a line is written, which files a task will
// touch, so that coord can keep tasks likely to collide from being in
// flight at once. It is coord's planning model and
// does no I/O: it takes plain data (the history's commits, the current
// tree's paths, optionally the identifiers in the files, the project's
// finished tasks with the paths they touched) and returns, for each task,
// paths best first with a score and the reasons they were chosen.
//
// What speaks for a file (each signal weighed by Params):
//   - similar changes: the past commits whose messages most resemble the
//     task (tf-idf cosine; subject words count double; a version number is
//     a word of its own) vote for the files they touched, by similarity
//     and recency;
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
// Hot files (a changelog, a central module) get a policy of their own: a
// file is predicted for at most Cap times as many of a batch's tasks as
// its share of recent changes warrants (plus CapSlack), and never for more
// than HotCap times the largest share any file has; the tasks with the
// strongest evidence keep it. Predicting a changelog for every task that
// might touch it would serialise most of the work (every task predicted to
// touch a file waits for the others), predicting it for none would leave
// its conflicts; the bounds keep each predicted chain of tasks near the
// length of the real one. Since the bound is over a batch, planning the
// unclaimed tasks again as work lands also relieves a file whose waiting
// tasks pile up: the weakest predictions of it are dropped.
//
// Promises: only paths of the current tree (or declared by the task) are
// predicted; a path renamed in the history counts under its current name,
// and a deleted path's history never counts for a new file of the same
// name; the result is deterministic; a Model is read-only once built.
//
// An Index keeps the commits between runs (Save and Load over an
// io.Writer and io.Reader, keyed by the head it was built at) so that a
// run reads only the commits made since (Update); package gitlog reads
// them from git.
package plan
