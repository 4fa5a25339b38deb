package trace

import (
	"encoding/json"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// UpdateHeader rewrites the header of a finished trace: it opens the file
// (checked like Open), applies f to its header and stores the result with its
// checksum. Recorders use it to add what they learn after the events are
// written, such as the analysis of a hung run. The format version, world size
// and event counts are kept as they were: f may not change what the events are.
func UpdateHeader(path string, f func(*Header)) error {
	r, err := Open(path)
	if err != nil {
		return err
	}
	h := r.raw
	r.Close()
	keep := h
	f(&h)
	h.FormatVersion, h.WorldSize, h.Events, h.RankEvents = keep.FormatVersion, keep.WorldSize, keep.Events, keep.RankEvents
	hj, err := json.Marshal(&h)
	if err != nil {
		return fmt.Errorf("update trace header %s: %w", path, err)
	}
	db, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: DefaultLockTimeout})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return lockedError(path)
		}
		return fmt.Errorf("update trace header %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return notTrace(path, "a bbolt database without the p2ptrace meta bucket")
		}
		return putHeader(meta, hj)
	})
	if err == nil {
		// The rewrite may have grown the file by bbolt's step.
		err = trimFile(db, false)
	}
	if cerr := db.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("update trace header %s: %w", path, err)
	}
	return nil
}
