package faults

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseValid(t *testing.T) {
	us := time.Microsecond
	ms := time.Millisecond
	tests := []struct {
		in    string
		want  Spec
		canon string
	}{
		{"delay", Spec{Kind: Delay, P: 0.5, Max: 200 * us}, "delay"},
		{"DELAY", Spec{Kind: Delay, P: 0.5, Max: 200 * us}, "delay"},
		{"delay:d=5ms", Spec{Kind: Delay, P: 0.5, Min: 5 * ms, Max: 5 * ms}, "delay:d=5ms"},
		{"delay:rank=1,max=5ms,p=0.3", Spec{Kind: Delay, Rank: Only(1), P: 0.3, Max: 5 * ms}, "delay:rank=1,p=0.3,max=5ms"},
		{"delay:rank=1", Spec{Kind: Delay, Rank: Only(1), P: 1, Max: 200 * us}, "delay:rank=1"},
		{"delay:p=1", Spec{Kind: Delay, P: 1, Max: 200 * us}, "delay:p=1"},
		{"delay:p=0", Spec{Kind: Delay, P: 0, Max: 200 * us}, "delay:p=0"},
		{"delay:src=0,dst=1,tag=3,op=isend,nth=2", Spec{Kind: Delay, Src: Only(0), Dst: Only(1), Tag: Only(3), Op: "Isend", Nth: 2, P: 1, Max: 200 * us}, "delay:src=0,dst=1,tag=3,op=Isend,nth=2"},
		{"delay:op=StreamSend", Spec{Kind: Delay, Op: "Stream.Send", P: 1, Max: 200 * us}, "delay:op=Stream.Send"},
		{"delay:op=stream.send", Spec{Kind: Delay, Op: "Stream.Send", P: 1, Max: 200 * us}, "delay:op=Stream.Send"},
		{"delay:min=1ms,max=2ms", Spec{Kind: Delay, P: 0.5, Min: ms, Max: 2 * ms}, "delay:min=1ms,max=2ms"},
		{"delay:min=1ms", Spec{Kind: Delay, P: 0.5, Min: ms, Max: ms + 200*us}, "delay:min=1ms"},
		{"delay:max=0s", Spec{Kind: Delay, P: 0.5}, "delay:d=0s"},
		{"delay:min=3ms,max=3ms", Spec{Kind: Delay, P: 0.5, Min: 3 * ms, Max: 3 * ms}, "delay:d=3ms"},
		{"delay:d=37us", Spec{Kind: Delay, P: 0.5, Min: 37 * us, Max: 37 * us}, "delay:d=37us"},
		{"delay:d=37µs", Spec{Kind: Delay, P: 0.5, Min: 37 * us, Max: 37 * us}, "delay:d=37us"},
		{"delay:nth=all", Spec{Kind: Delay, P: 0.5, Max: 200 * us}, "delay"},
		{" delay : rank = 2 , P=0.25 ", Spec{Kind: Delay, Rank: Only(2), P: 0.25, Max: 200 * us}, "delay:rank=2,p=0.25"},
		{"drop", Spec{Kind: Drop, Nth: 1, P: 1}, "drop"},
		{"drop:src=0,dst=1,tag=3,nth=2", Spec{Kind: Drop, Src: Only(0), Dst: Only(1), Tag: Only(3), Nth: 2, P: 1}, "drop:src=0,dst=1,tag=3,nth=2"},
		{"drop:nth=all,p=0.1", Spec{Kind: Drop, P: 0.1}, "drop:nth=all,p=0.1"},
		{"drop:p=0.5", Spec{Kind: Drop, Nth: 1, P: 0.5}, "drop:p=0.5"},
		{"drop:op=Sendrecv", Spec{Kind: Drop, Op: "Sendrecv", Nth: 1, P: 1}, "drop:op=Sendrecv"},
		{"mutate", Spec{Kind: Mutate}, "mutate"},
		{"mutate:scribble=true", Spec{Kind: Mutate, Scribble: true}, "mutate:scribble=true"},
		{"mutate:scribble=false", Spec{Kind: Mutate}, "mutate"},
		{"sync", Spec{Kind: Sync}, "sync"},
		{"Sync", Spec{Kind: Sync}, "sync"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("Parse(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
			if s := got.String(); s != tt.canon {
				t.Fatalf("String() = %q, want %q", s, tt.canon)
			}
			if err := got.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			again, err := Parse(got.String())
			if err != nil || again != got {
				t.Fatalf("Parse(String()) = %#v, %v; want %#v", again, err, got)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	const delayKeys = "(valid keys: rank, src, dst, tag, op, nth, p, d, min, max)"
	const dropKeys = "(valid keys: rank, src, dst, tag, op, nth, p)"
	const ops = "(valid ops: Send, Ssend, Bsend, Rsend, Isend, Issend, Ibsend, Irsend, Sendrecv, Stream.Send)"
	tests := []struct {
		in, part, msg string
	}{
		{"delya", "delya", `unknown kind "delya" (valid kinds: delay, drop, mutate, sync)`},
		{"", "", `missing kind (valid kinds: delay, drop, mutate, sync)`},
		{":p=1", "", `missing kind (valid kinds: delay, drop, mutate, sync)`},
		{"delay:foo=1", "foo", `unknown key "foo" for delay ` + delayKeys},
		{"drop:foo=1", "foo", `unknown key "foo" for drop ` + dropKeys},
		{"drop:d=1ms", "d", `key "d" does not apply to drop ` + dropKeys},
		{"drop:scribble=true", "scribble", `key "scribble" does not apply to drop ` + dropKeys},
		{"sync:rank=1", "rank", `key "rank" does not apply to sync (sync takes no keys)`},
		{"sync:foo=1", "foo", `unknown key "foo" for sync (sync takes no keys)`},
		{"mutate:rank=0", "rank", `key "rank" does not apply to mutate (valid keys: scribble)`},
		{"mutate:p=1", "p", `key "p" does not apply to mutate (valid keys: scribble)`},
		{"mutate:scribble=maybe", "scribble=maybe", `scribble=maybe: not a boolean (want true or false)`},
		{"delay:", "", `empty key=value pair`},
		{"delay:p=1,", "", `empty key=value pair`},
		{"delay:rank", "rank", `"rank" is not key=value`},
		{"delay:=1", "=1", `missing key in "=1"`},
		{"delay:p=", "p=", `empty value for key "p"`},
		{"delay:p=2", "p=2", `p=2 is out of range (want a probability in [0,1])`},
		{"delay:p=-0.1", "p=-0.1", `p=-0.1 is out of range (want a probability in [0,1])`},
		{"delay:p=half", "p=half", `p=half: not a number (want a probability in [0,1])`},
		{"delay:p=NaN", "p=NaN", `p=NaN: not a number (want a probability in [0,1])`},
		{"delay:nth=0", "nth=0", `nth=0: nth must be an integer >= 1 (the first match is nth=1), or all`},
		{"drop:nth=-2", "nth=-2", `nth=-2: nth must be an integer >= 1 (the first match is nth=1), or all`},
		{"delay:rank=-1", "rank=-1", `rank=-1: rank must be a non-negative integer`},
		{"delay:src=a", "src=a", `src=a: src must be a non-negative integer`},
		{"drop:dst=1.5", "dst=1.5", `dst=1.5: dst must be a non-negative integer`},
		{"drop:tag=-1", "tag=-1", `tag=-1: tag must be a non-negative integer`},
		{"drop:op=Recv", "op=Recv", `op=Recv: unknown send op "Recv" ` + ops},
		{"delay:p=0.1,p=0.2", "p", `duplicate key "p"`},
		{"delay:rank=1,RANK=1", "rank", `duplicate key "rank"`},
		{"delay:d=5", "d=5", `d=5: not a duration (want e.g. 5ms, 200us, 1.5s)`},
		{"delay:d=-1ms", "d=-1ms", `d=-1ms: a delay must not be negative`},
		{"delay:min=2ms,max=1ms", "max", `max=1ms is less than min=2ms`},
		{"delay:min=1ms", "", ""}, // valid, skipped below
		{"delay:d=1ms,max=2ms", "d", `d cannot be combined with min or max (d=5ms means min=5ms,max=5ms)`},
	}
	for _, tt := range tests {
		if tt.msg == "" {
			continue
		}
		t.Run(tt.in, func(t *testing.T) {
			_, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded", tt.in)
			}
			if !errors.Is(err, ErrBadSpec) {
				t.Errorf("error does not wrap ErrBadSpec: %v", err)
			}
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("error is %T, want *SpecError", err)
			}
			if se.Spec != tt.in || se.Part != tt.part || se.Msg != tt.msg {
				t.Errorf("SpecError{Spec: %q, Part: %q, Msg: %q}, want {%q, %q, %q}", se.Spec, se.Part, se.Msg, tt.in, tt.part, tt.msg)
			}
			want := "bad fault spec " + quote(tt.in) + ": " + tt.msg
			if err.Error() != want {
				t.Errorf("error text\n got %s\nwant %s", err, want)
			}
		})
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

func TestErrorTextsFromBrief(t *testing.T) {
	for in, want := range map[string]string{
		"delya":       `bad fault spec "delya": unknown kind "delya" (valid kinds: delay, drop, mutate, sync)`,
		"delay:foo=1": `bad fault spec "delay:foo=1": unknown key "foo" for delay (valid keys: rank, src, dst, tag, op, nth, p, d, min, max)`,
	} {
		if _, err := Parse(in); err == nil || err.Error() != want {
			t.Errorf("Parse(%q) error = %v, want %s", in, err, want)
		}
	}
}

func TestSpecErrorUnwrapsCause(t *testing.T) {
	_, err := Parse("delay:d=xx")
	var se *SpecError
	if !errors.As(err, &se) || se.Err == nil {
		t.Fatalf("want a *SpecError with a cause, got %v", err)
	}
	if !errors.Is(err, se.Err) || !errors.Is(err, ErrBadSpec) {
		t.Fatal("Unwrap does not reach the cause and ErrBadSpec")
	}
}

func TestParseAll(t *testing.T) {
	specs, err := ParseAll([]string{"delay:p=0.3", "sync"})
	if err != nil {
		t.Fatal(err)
	}
	if got := Describe(specs); got != "delay:p=0.3, sync" {
		t.Errorf("Describe = %q", got)
	}
	if got := strings.Join(Args(specs), " "); got != "--fault delay:p=0.3 --fault sync" {
		t.Errorf("Args = %q", got)
	}
	// A finding under "drop:nth=1" is not labelled "under drop" (every message?).
	if got := Describe(mustParse(t, "drop:nth=1", "drop:tag=3")); got != "drop:nth=1, drop:tag=3,nth=1" {
		t.Errorf("Describe(drop:nth=1, drop:tag=3) = %q", got)
	}
	if got := Describe(nil); got != "none" {
		t.Errorf("Describe(nil) = %q", got)
	}
	if got := Args(nil); len(got) != 0 {
		t.Errorf("Args(nil) = %q", got)
	}
	if specs, err := ParseAll(nil); err != nil || len(specs) != 0 {
		t.Errorf("ParseAll(nil) = %v, %v", specs, err)
	}

	_, err = ParseAll([]string{"delay", "delya", "drop:nth=0"})
	if !errors.Is(err, ErrBadSpec) {
		t.Fatalf("want ErrBadSpec, got %v", err)
	}
	want := `bad fault spec "delya": unknown kind "delya" (valid kinds: delay, drop, mutate, sync)` + "\n" +
		`bad fault spec "drop:nth=0": nth=0: nth must be an integer >= 1 (the first match is nth=1), or all`
	if err.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", err, want)
	}
	var se *SpecError
	if !errors.As(err, &se) || se.Spec != "delya" {
		t.Errorf("errors.As: %#v", se)
	}
}

func TestValidate(t *testing.T) {
	bad := []Spec{
		{Kind: "jitter"},
		{Kind: "DELAY", P: 1},
		{Kind: Sync, P: 1},
		{Kind: Sync, Scribble: true},
		{Kind: Mutate, Rank: Only(1)},
		{Kind: Delay, P: 2},
		{Kind: Delay, P: 1, Min: 2, Max: 1},
		{Kind: Delay, P: 1, Min: -1, Max: 1},
		{Kind: Delay, P: 1, Rank: Only(-1)},
		{Kind: Delay, P: 1, Op: "isend"},
		{Kind: Delay, P: 1, Nth: -1},
		{Kind: Drop, P: 1, Max: 1},
		{Kind: Drop, P: 1, Scribble: true},
	}
	for _, s := range bad {
		if err := s.Validate(); !errors.Is(err, ErrBadSpec) {
			t.Errorf("Validate(%#v) = %v, want ErrBadSpec", s, err)
		}
	}
	good := []Spec{{Kind: Sync}, {Kind: Mutate, Scribble: true}, {Kind: Drop, P: 1, Nth: 1}, {Kind: Delay, P: 1, Op: "Isend", Max: 5}}
	for _, s := range good {
		if err := s.Validate(); err != nil {
			t.Errorf("Validate(%#v) = %v", s, err)
		}
	}
}

func TestHelpTextMentionsEverything(t *testing.T) {
	for _, w := range append(append([]string{"delay", "drop", "mutate", "sync", "scribble"}, Keys(Delay)...), Ops()...) {
		if !strings.Contains(HelpText, w) {
			t.Errorf("HelpText does not mention %q", w)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"delay", "drop", "mutate", "sync", "mutate:scribble=true",
		"delay:rank=1,max=5ms,p=0.3", "drop:src=0,dst=1,tag=3,nth=2", "delay:min=1ms",
		"delay:d=1.5ms,op=streamsend", "drop:nth=all,p=1e-3", "delay:p=0.1,p=0.2", "x:y=z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrBadSpec) {
				t.Fatalf("error does not wrap ErrBadSpec: %v", err)
			}
			return
		}
		if err := sp.Validate(); err != nil {
			t.Fatalf("Parse(%q) = %#v, which does not validate: %v", s, sp, err)
		}
		c := sp.String()
		again, err := Parse(c)
		if err != nil {
			t.Fatalf("Parse(%q).String() = %q does not parse: %v", s, c, err)
		}
		if again != sp {
			t.Fatalf("Parse(%q) = %#v, but Parse(%q) = %#v", s, sp, c, again)
		}
		if again.String() != c {
			t.Fatalf("canonical form not stable: %q -> %q", c, again.String())
		}
	})
}
