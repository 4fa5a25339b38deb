package trace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	bolt "go.etcd.io/bbolt"
)

// compactTxBytes bounds the data of one write transaction of the compacting
// copy: bbolt keeps a transaction's pages in memory until it commits.
const compactTxBytes = 8 << 20

// compactFraction: the writer compacts a finished trace when more than
// 1/compactFraction of its pages are free (old versions of rewritten
// blocks). Below that it only trims the file (trimFile).
const compactFraction = 8

// finishFile makes the file of a finished recording hold its data and not
// bbolt's slack: the free pages left by rewritten blocks (a compacting copy
// when they are many, see compactFraction) and the growth bbolt allocates
// ahead (trimFile). db is open for writing and stays open (and locked):
// the caller closes it. It returns the compacted copy that now backs
// path, if it made one (open and locked, even with an error), which the
// caller closes too.
//
// Crash safety: the file at path is a complete trace at every moment. The
// copy is written beside it, made durable, and renamed over it in one step;
// a process killed before the rename leaves path as it was (and a stray
// "*.compact-*" file beside it, which the next writer of path removes:
// removeStaleCopies).
func finishFile(db *bolt.DB, path string, noSync bool) (*bolt.DB, error) {
	removeStaleCopies(path)
	st := db.Stats()
	var pages int64
	var ps int
	if err := db.View(func(tx *bolt.Tx) error {
		ps = tx.DB().Info().PageSize
		pages = tx.Size() / int64(ps)
		return nil
	}); err != nil {
		return nil, err
	}
	free := int64(st.FreePageN + st.PendingPageN)
	if free*compactFraction <= pages {
		return nil, trimFile(db, noSync)
	}
	dst, err := compactCopy(db, path, noSync)
	switch {
	case err != nil && dst == nil:
		// The file is a complete trace, only bigger than it needs be.
		return nil, errors.Join(fmt.Errorf("compact trace %s: %w (kept uncompacted)", path, err), trimFile(db, noSync))
	case err != nil:
		// Renamed, but the directory was not synced.
		return dst, fmt.Errorf("compact trace %s: %w", path, err)
	}
	return dst, nil
}

// compactSuffix names the compacting copy of a trace: its path, this, and
// the random digits of os.CreateTemp.
const compactSuffix = ".compact-"

// removeStaleCopies removes the compacting copies of path that a writer
// killed during its compaction left beside it. The caller holds path's
// write lock, so no other process is compacting path now; a copy is also
// kept while any process holds its lock (bbolt's flock), and a file whose
// name is not exactly a copy's is never touched. Errors are ignored: a
// stray copy costs disk space, not correctness.
func removeStaleCopies(path string) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		digits, ok := strings.CutPrefix(e.Name(), base+compactSuffix)
		if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" || !e.Type().IsRegular() {
			continue
		}
		name := filepath.Join(dir, e.Name())
		f, err := os.OpenFile(name, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.Remove(name)
		}
		f.Close()
	}
}

// compactCopy copies db into a new file beside path with every page full,
// trims it, and renames it over path. It returns the copy, still open (and
// locked, so that no reader reads it before the caller is done), once it
// is renamed, even if an error follows.
func compactCopy(src *bolt.DB, path string, noSync bool) (*bolt.DB, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+compactSuffix+"*")
	if err != nil {
		return nil, err
	}
	name := tmp.Name()
	// CreateTemp makes the file private: give it the mode of the trace.
	err = tmp.Close()
	if fi, serr := os.Stat(path); err == nil && serr == nil {
		err = os.Chmod(name, fi.Mode().Perm())
	}
	if err != nil {
		os.Remove(name)
		return nil, err
	}
	// One fsync at the end instead of one per transaction.
	dst, err := bolt.Open(name, 0o644, &bolt.Options{NoSync: true, Timeout: DefaultLockTimeout})
	if err != nil {
		os.Remove(name)
		return nil, err
	}
	fail := func(err error) (*bolt.DB, error) {
		dst.Close()
		os.Remove(name)
		return nil, err
	}
	if err := bolt.Compact(dst, src, compactTxBytes); err != nil {
		return fail(err)
	}
	if err := trimFile(dst, noSync); err != nil {
		return fail(err)
	}
	if !noSync {
		if err := dst.Sync(); err != nil {
			return fail(err)
		}
	}
	if err := os.Rename(name, path); err != nil {
		return fail(err)
	}
	if !noSync {
		if err := syncDir(filepath.Dir(path)); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// trimFile truncates the file of db to the pages its last transaction uses
// (bbolt grows a file ahead of its data, doubling it up to 1 GiB) and makes
// that durable. db stays open: the file lock is held throughout, so no
// other writer can grow the file in between. Nothing reads the pages past
// the end once the last transaction has committed, and bbolt grows the
// file again when a later writer (UpdateHeader) needs room.
func trimFile(db *bolt.DB, noSync bool) error {
	var size int64
	if err := db.View(func(tx *bolt.Tx) error {
		size = tx.Size()
		return nil
	}); err != nil {
		return err
	}
	// A second descriptor of the file: bbolt's own is not exported. The
	// lock is bbolt's, held on its descriptor.
	f, err := os.OpenFile(db.Path(), os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("trim trace file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("trim trace file: %w", err)
	}
	if fi.Size() <= size {
		return nil
	}
	if err := f.Truncate(size); err != nil {
		return fmt.Errorf("trim trace file: %w", err)
	}
	if noSync {
		return nil
	}
	return f.Sync()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
