package main

import (
	"bufio"
	"bytes"
	"reflect"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/p2ptrace/p2ptrace/gpu"
)

// outOfOrder: rank 0 posts two Irecvs and waits for them in the other
// order, posts a third that nothing matches, and ends; rank 1 sends twice.
// The ops complete out of their order, and one never does.
func outOfOrder(r *gpu.Rank) error {
	b, c := r.Alloc(gpu.Int32, 4), r.Alloc(gpu.Int32, 4)
	if r.ID() == 1 {
		for tag := range 2 {
			if err := r.Send(b, 0, tag); err != nil {
				return err
			}
		}
		return nil
	}
	q0, err := r.Irecv(b, 1, 0)
	if err != nil {
		return err
	}
	q1, err := r.Irecv(c, 1, 1)
	if err != nil {
		return err
	}
	if _, err := r.Irecv(b, 1, 9); err != nil { // never matched
		return err
	}
	if _, err := r.Wait(q1); err != nil {
		return err
	}
	_, err = r.Wait(q0)
	return err
}

// TestEachOpIsLoadRank: the streamed ops of a rank are the ops loadRank
// reads whole, in the same order with the same completions, on ranks whose
// ops complete out of order or never.
func TestEachOpIsLoadRank(t *testing.T) {
	for _, c := range []struct {
		name  string
		ranks int
		fn    func(*gpu.Rank) error
	}{{"out-of-order", 2, outOfOrder}, {"anysource-race", 3, anySourceRace}, {"isend-mutate", 2, isendMutate}} {
		t.Run(c.name, func(t *testing.T) {
			r, err := openTrace(recordInProcess(t, c.name, c.ranks, c.fn))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for rank := range r.Ranks() {
				want, err := loadRank(r, rank)
				if err != nil {
					t.Fatal(err)
				}
				sc, err := scanRank(r, rank, true)
				if err != nil {
					t.Fatal(err)
				}
				if sc.loaded != nil {
					t.Fatalf("rank %d was loaded whole: a recorder's trace streams", rank)
				}
				if c.name == "out-of-order" && rank == 0 && len(sc.pending) != 1 {
					t.Fatalf("rank 0: ops never completed %v, want the third Irecv", sc.pending)
				}
				var got []opRec
				if err := eachOp(r, sc, func(op *opRec) error { got = append(got, *op); return nil }); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("rank %d: streamed\n%+v\nloaded\n%+v", rank, got, want)
				}
				for _, op := range want {
					end := op.Post.PostVT
					if op.HasDone {
						end = op.Done.DoneVT
					}
					if got, ok := sc.endOf(op.Post.Seq); !ok || got != end {
						t.Fatalf("rank %d op %d ends at %d (%v), want %d", rank, op.Post.Seq, got, ok, end)
					}
				}
			}
		})
	}
}

// TestTableIsTabwriter: show --events' table aligns as the tabwriter it
// replaces, wide characters included.
func TestTableIsTabwriter(t *testing.T) {
	rows := [][]string{eventsHeader[:4], {"1", "Isend", "-", "héllo"}, {"12345", "Waitall", "any", "x"}, {"7", "Send", "日本語のファイル.go:3", ""}}
	var want bytes.Buffer
	tw := tabwriter.NewWriter(&want, 0, 4, 2, ' ', 0)
	for _, row := range rows {
		tw.Write([]byte(strings.Join(row, "\t") + "\n"))
	}
	tw.Flush()
	tb := newTable(rows[0])
	for _, row := range rows[1:] {
		tb.measure(row)
	}
	var got bytes.Buffer
	w := bufio.NewWriter(&got)
	for _, row := range rows {
		tb.write(w, row)
	}
	w.Flush()
	if got.String() != want.String() {
		t.Fatalf("table:\n%q\ntabwriter:\n%q", got.String(), want.String())
	}
}
