package faults

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// A Kind names what a fault does. See the package doc for each kind.
type Kind string

// The fault kinds.
const (
	Delay  Kind = "delay"  // adds virtual latency to selected messages
	Drop   Kind = "drop"   // a selected message never reaches its receiver
	Mutate Kind = "mutate" // in-flight send buffers are read at the latest legal moment
	Sync   Kind = "sync"   // zero buffering: every standard send is synchronous
)

// Defaults of a delay's amount when neither d, min nor max is given: uniform in
// [0, DefaultMaxDelay]. When only min is given, max is min+DefaultMaxDelay.
const DefaultMaxDelay = 200 * time.Microsecond

// ErrBadSpec is wrapped by every error of Parse and ParseAll (and Validate).
var ErrBadSpec = errors.New("bad fault spec")

// SpecError is the error of a fault spec that does not parse or validate. It
// wraps ErrBadSpec and, where there is one, the underlying cause in Err.
type SpecError struct {
	Spec string // the spec as given
	Part string // the offending part: a kind, a key, or key=value
	Msg  string // what is wrong, naming Part and the valid choices
	Err  error  // the underlying cause (a strconv or time error), or nil
}

// Error reads like
// bad fault spec "delya": unknown kind "delya" (valid kinds: delay, drop, mutate, sync).
func (e *SpecError) Error() string { return fmt.Sprintf("bad fault spec %q: %s", e.Spec, e.Msg) }

// Unwrap returns ErrBadSpec and the cause, if any.
func (e *SpecError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrBadSpec, e.Err}
	}
	return []error{ErrBadSpec}
}

// Sel is an optional integer selector (rank, src, dst or tag). The zero value
// is unset and matches anything.
type Sel struct {
	Set bool
	V   int
}

// Only returns a selector that matches exactly v.
func Only(v int) Sel { return Sel{Set: true, V: v} }

func (s Sel) match(v int) bool { return !s.Set || s.V == v }

// A Spec is one parsed fault: `KIND[:key=value,...]`. Parse fills in the
// defaults, so a parsed Spec holds the effective values; String gives the
// canonical text, which parses back to an equal Spec. Specs are comparable
// with ==.
//
// When building a Spec by hand, set P (its zero value means "never") and
// check it with Validate.
type Spec struct {
	Kind Kind

	// Selectors of delay and drop. Unset selectors match anything.
	Rank Sel    // either end of the message
	Src  Sel    // the sender
	Dst  Sel    // the receiver
	Tag  Sel    // the message tag
	Op   string // canonical send op name (see Ops); "" matches any
	Nth  int    // only the Nth message matching the selectors above (1-based); 0: every one
	P    float64

	// Amount of a delay: uniform in [Min, Max]; Min == Max is a fixed delay.
	Min, Max time.Duration

	// Scribble (mutate only): the fault also overwrites in-flight send
	// buffers. Engines that support it ask Plan.Scribble.
	Scribble bool
}

// Kinds lists the valid kinds in the order the error messages list them.
func Kinds() []Kind { return []Kind{Delay, Drop, Mutate, Sync} }

// Ops lists the canonical send op names the op selector accepts (matched
// case-insensitively; "StreamSend" is accepted for "Stream.Send").
func Ops() []string {
	return []string{"Send", "Ssend", "Bsend", "Rsend", "Isend", "Issend", "Ibsend", "Irsend", "Sendrecv", "Stream.Send"}
}

// Keys returns the keys valid for kind k, in canonical order.
func Keys(k Kind) []string {
	switch k {
	case Delay:
		return []string{"rank", "src", "dst", "tag", "op", "nth", "p", "d", "min", "max"}
	case Drop:
		return []string{"rank", "src", "dst", "tag", "op", "nth", "p"}
	case Mutate:
		return []string{"scribble"}
	}
	return nil
}

var allKeys = map[string]bool{ // read-only
	"rank": true, "src": true, "dst": true, "tag": true, "op": true, "nth": true,
	"p": true, "d": true, "min": true, "max": true, "scribble": true,
}

func validKinds() string {
	ks := Kinds()
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return "valid kinds: " + strings.Join(s, ", ")
}

func validKeys(k Kind) string {
	keys := Keys(k)
	if len(keys) == 0 {
		return string(k) + " takes no keys"
	}
	return "valid keys: " + strings.Join(keys, ", ")
}

func canonOp(s string) (string, bool) {
	if strings.EqualFold(s, "StreamSend") {
		return "Stream.Send", true
	}
	for _, op := range Ops() {
		if strings.EqualFold(s, op) {
			return op, true
		}
	}
	return "", false
}

func parseKind(s string) (Kind, bool) {
	for _, k := range Kinds() {
		if strings.EqualFold(s, string(k)) {
			return k, true
		}
	}
	return "", false
}

// targeted reports whether a delay or drop has any selector other than p.
func (s Spec) targeted() bool {
	return s.Rank.Set || s.Src.Set || s.Dst.Set || s.Tag.Set || s.Op != "" || s.Nth != 0
}

// defaultP is the probability Parse gives a spec without p: an untargeted
// delay (no rank, src, dst, tag, op or nth) is a jitter on half the messages;
// everything else hits every message it selects.
func (s Spec) defaultP() float64 {
	if s.Kind == Delay && !s.targeted() {
		return 0.5
	}
	return 1
}

func defaultNth(k Kind) int {
	if k == Drop {
		return 1
	}
	return 0
}

func addSat(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Parse parses one fault spec, `KIND[:key=value,...]`, the same syntax as the
// --fault flag of p2ptrace replay (see HelpText). Kinds, keys and op names are
// case-insensitive; spaces around them are ignored. Errors are *SpecError.
func Parse(s string) (Spec, error) {
	bad := func(part, format string, args ...any) (Spec, error) {
		return Spec{}, &SpecError{Spec: s, Part: part, Msg: fmt.Sprintf(format, args...)}
	}
	badErr := func(err error, part, format string, args ...any) (Spec, error) {
		return Spec{}, &SpecError{Spec: s, Part: part, Msg: fmt.Sprintf(format, args...), Err: err}
	}
	kindText, rest, hasKeys := strings.Cut(s, ":")
	kindText = strings.TrimSpace(kindText)
	if kindText == "" {
		return bad(kindText, "missing kind (%s)", validKinds())
	}
	kind, ok := parseKind(kindText)
	if !ok {
		return bad(kindText, "unknown kind %q (%s)", kindText, validKinds())
	}
	sp := Spec{Kind: kind}
	seen := map[string]bool{}
	pSet, nthSet := false, false
	var d, minD, maxD time.Duration
	dSet, minSet, maxSet := false, false, false
	if hasKeys {
		for item := range strings.SplitSeq(rest, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				return bad(item, "empty key=value pair")
			}
			key, val, ok := strings.Cut(item, "=")
			key = strings.ToLower(strings.TrimSpace(key))
			val = strings.TrimSpace(val)
			if !ok {
				return bad(item, "%q is not key=value", item)
			}
			if key == "" {
				return bad(item, "missing key in %q", item)
			}
			if !allKeys[key] {
				return bad(key, "unknown key %q for %s (%s)", key, kind, validKeys(kind))
			}
			if !contains(Keys(kind), key) {
				return bad(key, "key %q does not apply to %s (%s)", key, kind, validKeys(kind))
			}
			if seen[key] {
				return bad(key, "duplicate key %q", key)
			}
			seen[key] = true
			if val == "" {
				return bad(item, "empty value for key %q", key)
			}
			switch key {
			case "rank", "src", "dst", "tag":
				n, err := strconv.Atoi(val)
				if err != nil || n < 0 {
					return badErr(err, item, "%s=%s: %s must be a non-negative integer", key, val, key)
				}
				switch key {
				case "rank":
					sp.Rank = Only(n)
				case "src":
					sp.Src = Only(n)
				case "dst":
					sp.Dst = Only(n)
				case "tag":
					sp.Tag = Only(n)
				}
			case "op":
				op, ok := canonOp(val)
				if !ok {
					return bad(item, "op=%s: unknown send op %q (valid ops: %s)", val, val, strings.Join(Ops(), ", "))
				}
				sp.Op = op
			case "nth":
				nthSet = true
				if strings.EqualFold(val, "all") {
					sp.Nth = 0
					break
				}
				n, err := strconv.Atoi(val)
				if err != nil || n < 1 {
					return badErr(err, item, "nth=%s: nth must be an integer >= 1 (the first match is nth=1), or all", val)
				}
				sp.Nth = n
			case "p":
				p, err := strconv.ParseFloat(val, 64)
				if err != nil || math.IsNaN(p) {
					return badErr(err, item, "p=%s: not a number (want a probability in [0,1])", val)
				}
				if p < 0 || p > 1 {
					return bad(item, "p=%s is out of range (want a probability in [0,1])", val)
				}
				sp.P = p + 0 // normalizes -0
				if sp.P == 0 {
					sp.P = 0
				}
				pSet = true
			case "d", "min", "max":
				v, err := time.ParseDuration(val)
				if err != nil {
					return badErr(err, item, "%s=%s: not a duration (want e.g. 5ms, 200us, 1.5s)", key, val)
				}
				if v < 0 {
					return bad(item, "%s=%s: a delay must not be negative", key, val)
				}
				switch key {
				case "d":
					d, dSet = v, true
				case "min":
					minD, minSet = v, true
				case "max":
					maxD, maxSet = v, true
				}
			case "scribble":
				b, err := strconv.ParseBool(val)
				if err != nil {
					return badErr(err, item, "scribble=%s: not a boolean (want true or false)", val)
				}
				sp.Scribble = b
			}
		}
	}
	if !nthSet {
		sp.Nth = defaultNth(kind)
	}
	if kind == Delay || kind == Drop {
		if !pSet {
			sp.P = sp.defaultP()
		}
	}
	if kind == Delay {
		switch {
		case dSet && (minSet || maxSet):
			return bad("d", "d cannot be combined with min or max (d=5ms means min=5ms,max=5ms)")
		case dSet:
			sp.Min, sp.Max = d, d
		default:
			sp.Min = minD // 0 unless given
			sp.Max = addSat(sp.Min, DefaultMaxDelay)
			if maxSet {
				sp.Max = maxD
			}
			if sp.Max < sp.Min {
				return bad("max", "max=%s is less than min=%s", fmtDur(sp.Max), fmtDur(sp.Min))
			}
		}
	}
	return sp, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ParseAll parses each spec. It reports every bad spec, joined with
// errors.Join; each is a *SpecError.
func ParseAll(specs []string) ([]Spec, error) {
	out := make([]Spec, 0, len(specs))
	var errs []error
	for _, s := range specs {
		sp, err := Parse(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, sp)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// Validate reports whether a Spec (for instance one built by hand) is one
// that Parse could have returned. The error is a *SpecError.
func (s Spec) Validate() error {
	bad := func(part, format string, args ...any) error {
		return &SpecError{Spec: s.String(), Part: part, Msg: fmt.Sprintf(format, args...)}
	}
	if _, ok := parseKind(string(s.Kind)); !ok || s.Kind != Kind(strings.ToLower(string(s.Kind))) {
		return &SpecError{Spec: string(s.Kind), Part: string(s.Kind), Msg: fmt.Sprintf("unknown kind %q (%s)", s.Kind, validKinds())}
	}
	sel := s.targeted() || s.P != 0
	switch s.Kind {
	case Sync, Mutate:
		if sel || s.Min != 0 || s.Max != 0 {
			return bad("", "%s takes no selectors or amounts (%s)", s.Kind, validKeys(s.Kind))
		}
		if s.Kind == Sync && s.Scribble {
			return bad("scribble", "key %q does not apply to sync (sync takes no keys)", "scribble")
		}
		return nil
	}
	if s.Scribble {
		return bad("scribble", "key %q does not apply to %s (%s)", "scribble", s.Kind, validKeys(s.Kind))
	}
	for _, x := range []struct {
		name string
		sel  Sel
	}{{"rank", s.Rank}, {"src", s.Src}, {"dst", s.Dst}, {"tag", s.Tag}} {
		if x.sel.Set && x.sel.V < 0 {
			return bad(x.name, "%s=%d: %s must be a non-negative integer", x.name, x.sel.V, x.name)
		}
	}
	if s.Op != "" {
		if op, ok := canonOp(s.Op); !ok || op != s.Op {
			return bad("op", "op=%s: unknown send op %q (valid ops: %s)", s.Op, s.Op, strings.Join(Ops(), ", "))
		}
	}
	if s.Nth < 0 {
		return bad("nth", "nth=%d: nth must be an integer >= 1 (the first match is nth=1), or all", s.Nth)
	}
	if math.IsNaN(s.P) || s.P < 0 || s.P > 1 {
		return bad("p", "p=%v is out of range (want a probability in [0,1])", s.P)
	}
	if s.Kind == Drop && (s.Min != 0 || s.Max != 0) {
		return bad("d", "drop takes no delay amount (%s)", validKeys(Drop))
	}
	if s.Min < 0 || s.Max < 0 {
		return bad("min", "a delay must not be negative")
	}
	if s.Max < s.Min {
		return bad("max", "max=%s is less than min=%s", fmtDur(s.Max), fmtDur(s.Min))
	}
	return nil
}

// fmtDur formats d like time.Duration.String but with "us" for microseconds,
// which is easier to type on a command line.
func fmtDur(d time.Duration) string { return strings.Replace(d.String(), "µs", "us", 1) }

// String returns the canonical form of s: lower-case kind, keys in the order
// rank, src, dst, tag, op, nth, p, d|min,max, scribble, and keys whose value
// is the default omitted. Parse(s.String()) == s for every parsed Spec.
func (s Spec) String() string { return s.format(false) }

// Full is String with a drop's nth always written: its default, 1, drops
// only the first matching message, which a bare "drop" does not say.
func (s Spec) Full() string { return s.format(true) }

func (s Spec) format(full bool) string {
	var b strings.Builder
	b.WriteString(string(s.Kind))
	sep := ":"
	add := func(k, v string) {
		b.WriteString(sep)
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
		sep = ","
	}
	for _, x := range []struct {
		name string
		sel  Sel
	}{{"rank", s.Rank}, {"src", s.Src}, {"dst", s.Dst}, {"tag", s.Tag}} {
		if x.sel.Set {
			add(x.name, strconv.Itoa(x.sel.V))
		}
	}
	if s.Op != "" {
		add("op", s.Op)
	}
	if s.Kind == Delay || s.Kind == Drop {
		if s.Nth != defaultNth(s.Kind) || full && s.Kind == Drop {
			if s.Nth == 0 {
				add("nth", "all")
			} else {
				add("nth", strconv.Itoa(s.Nth))
			}
		}
		if s.P != s.defaultP() {
			add("p", strconv.FormatFloat(s.P, 'g', -1, 64))
		}
	}
	if s.Kind == Delay {
		switch {
		case s.Min == s.Max:
			add("d", fmtDur(s.Min))
		default:
			if s.Min != 0 {
				add("min", fmtDur(s.Min))
			}
			if s.Max != addSat(s.Min, DefaultMaxDelay) {
				add("max", fmtDur(s.Max))
			}
		}
	}
	if s.Scribble {
		add("scribble", "true")
	}
	return b.String()
}

// Describe returns the specs in their Full form joined by ", " for reports,
// or "none" when there are none.
func Describe(specs []Spec) string {
	if len(specs) == 0 {
		return "none"
	}
	parts := make([]string, len(specs))
	for i, s := range specs {
		parts[i] = s.Full()
	}
	return strings.Join(parts, ", ")
}

// Args returns the command-line flags that reproduce specs, such as
// ["--fault", "delay:p=0.3", "--fault", "sync"], for repro commands.
func Args(specs []Spec) []string {
	out := make([]string, 0, 2*len(specs))
	for _, s := range specs {
		out = append(out, "--fault", s.String())
	}
	return out
}
