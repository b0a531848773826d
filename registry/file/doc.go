// Package registry is coord's file-system backend: the registry file
// (active_work_registry.json, read and written by package format), the
// dependency map, config.json, the agent lock files and their
// reconciliation, and the coordination log with its daily rotation.
//
// Store implements coord.Backend. Every Update runs under the flock of
// .lock/registry.lock (a sidecar never renamed or replaced): it re-reads
// the registry, reconciles lock files against it (the registry is the
// truth), runs the operation, and commits in this order: new lock files
// (O_CREAT|O_EXCL|O_NOFOLLOW), the registry (temp, fsync, rename, directory
// fsync: the commit point), removal of lock files no longer backed, log
// lines. A crash between any two steps leaves a state the next Update's
// reconcile repairs.
//
// Reading is strict: duplicate keys, keys differing only in case, invalid
// UTF-8, trailing data and wrong types are errors naming the file. Unknown
// fields are preserved byte for byte; tasks an operation does not change
// are copied to the new file without being re-encoded.
package file
