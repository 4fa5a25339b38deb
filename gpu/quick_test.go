package gpu_test

import (
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu"
)

func TestQuickPingpong(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, 1<<20)
		if r.ID() == 0 {
			b.Float32s()[5] = 42
			if err := r.Send(b, 1, 0); err != nil {
				return err
			}
			_, err := r.Recv(b, 1, 0)
			return err
		}
		if _, err := r.Recv(b, 0, 0); err != nil {
			return err
		}
		if b.Float32s()[5] != 42 {
			t.Errorf("got %v", b.Float32s()[5])
		}
		return r.Send(b, 0, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestQuickHeadToHead(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, 1<<20)
		if err := r.Send(b, 1-r.ID(), 0); err != nil {
			return err
		}
		_, err := r.Recv(b, 1-r.ID(), 0)
		return err
	})
	t.Log(err)
	if err == nil {
		t.Fatal("want stuck")
	}
}
