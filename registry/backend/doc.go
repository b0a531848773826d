// Package backend is the one place that opens a storage engine: it maps a
// backend URL (the --backend flag, COORD_BACKEND, config.json's
// "backend"; docs/MANY-MACHINES.md) to an implementation of coord.Backend. It is the
// only package that names engines; front ends and the application know
// only the interfaces of package coord.
//
// Two engines exist: the file tree (package registry/file), named by no
// URL at all (the tree found from the working directory, Options.Root) or
// by file:///abs/path, the project root or its coordination directory;
// and NATS JetStream (package registry/nats), named by
// nats://[user:pass@]host:port[,host:port…][/NAMESPACE]. Any other scheme
// is refused (exit 1, naming the URL with its password masked).
//
// Beside opening, Formats hands the application (app.Options.Formats)
// the file formats of docs/FORMATS.md: seed batches in coord's and ROTD's
// dialects, a task as the registry holds it, the settings of config.json.
// So front ends pass bytes and name no storage package but this one and,
// for `coord hub`, which runs the NATS server itself, registry/nats/hub.
//
// Before it opens a tree, Open refuses what the engine cannot be trusted
// on: a tree on a network or user-space file system (NFS, 9p, FUSE, SMB,
// Ceph, …: flock is advisory and per host there, rename not atomic across
// clients) unless Options.AllowUnsafeFS says every agent runs on this one
// machine, and a .rotd or .rotd/coordination reached through a symlink
// (one checkout could then write into another's, or anywhere).
package backend
