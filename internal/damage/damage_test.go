package damage

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// The same seed gives the same cases, every one differs from the input,
// and every kind of damage is drawn.
func TestMutationsDeterministic(t *testing.T) {
	sound := make([]byte, 8*PageSize)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range sound {
		sound[i] = byte(rng.Uint32())
	}
	a, b := Mutations(sound, 3, 60), Mutations(sound, 3, 60)
	kinds := map[string]bool{}
	for i := range a {
		if a[i].Name != b[i].Name || !bytes.Equal(a[i].Data, b[i].Data) {
			t.Fatalf("case %d differs between two draws: %s / %s", i, a[i].Name, b[i].Name)
		}
		if bytes.Equal(a[i].Data, sound) {
			t.Errorf("case %d (%s) is the sound file", i, a[i].Name)
		}
		kinds[a[i].Name[:6]] = true
	}
	if len(kinds) < 5 {
		t.Errorf("kinds drawn: %v", kinds)
	}
}
