// Package fsops is the only place coord touches the file system. It knows
// nothing about tasks; it offers the mechanics every shared artifact needs:
//
//   - Tree: a directory opened as an os.Root, so no name can resolve outside
//     it (".." and symlinks pointing out are refused), with the final path
//     component never followed if it is a symlink (O_NOFOLLOW), and known
//     subdirectories checked to be real directories when the tree is opened.
//   - Lock: an exclusive flock(2) on a sidecar file that is never renamed or
//     replaced, with a bounded wait; the holder writes a one-line
//     description into the sidecar so a waiter can name it.
//   - Only regular files: every open is O_NONBLOCK|O_NOFOLLOW|O_NOCTTY,
//     then fstat, and anything but a regular file (a FIFO, socket, device
//     or directory) is refused with a *KindError naming it before a byte is
//     read or written; directories are opened with O_DIRECTORY. Replaces
//     (WriteFile, ReplaceFile) and Chtimes refuse such a name too. So no
//     file planted in the tree can make coord wait in open(2) or read(2).
//   - WriteFile: atomic replace (a temp file in the tree's top directory,
//     fsync, rename, fsync of the directory). The writer holds an
//     exclusive flock on its temp file from its creation until the
//     rename, so a temp file nobody holds is a dead writer's leftover,
//     whatever its age: RemoveStaleTemp removes such a file and never a
//     held one (pending.go). (google/renameio, which this replaced,
//     closes its temp file before the rename, so the flock could not
//     cover it, and does not fsync the directory.) WriteFileFromKeeping
//     also keeps a copy of the new content as the newest of a few
//     backups, rotating the older ones: no backup shares the file's
//     inode, so a write into the file in place never reaches one.
//   - CreateExcl: O_CREAT|O_EXCL|O_NOFOLLOW create.
//   - AppendLine: one whole line in a single write(2) on an O_APPEND file;
//     a short write is truncated away so the file never ends torn.
//   - Files named by their path outside any Tree (a seed file, the env
//     file an agent names for its session, git's pointer files, /proc):
//     OpenFile, ReadFile (bounded), ReadFileNoFollow, AppendFile and
//     ReadDir open them the same way (O_NONBLOCK, fstat, only a regular
//     file or, for ReadDir, O_DIRECTORY); a symlink a person named is
//     followed to its target, which is checked the same way.
//
// No other package of coord opens, reads, writes, walks or flocks a file
// by name itself: TestFilesOpenOnlyThroughFsops scans the module and
// names any such call outside fsops and its few exempt directories.
//
// Limits: flock is advisory and only trustworthy on local file systems
// (see CheckLocalFS); a directory swapped for a symlink after the tree was
// opened is still confined to the tree by os.Root. os.Root opens a
// directory handle without O_DIRECTORY, so fsops never asks it for one
// (OpenRoot) below the tree; only the tree's own directory is opened that
// way, right after a non-blocking check that it is a directory.
package fsops
