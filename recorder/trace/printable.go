package trace

import (
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable returns s with every control character escaped (\n, \t, \x1b,
// \u202e...), and invalid UTF-8 as \xNN, so that a string from a trace
// (a command line, a file name) cannot drive the terminal it is printed on:
// set its title, clear the screen, reorder text. A backslash is kept as is;
// a string without such characters is returned unchanged.
func Printable(s string) string { return escape(s, false) }

// PrintableText is Printable for multi-line text (a report): newlines are kept.
func PrintableText(s string) string { return escape(s, true) }

func escape(s string, keepNewlines bool) string {
	clean := true
	for i, r := range s {
		if needsEscape(r) && (r != '\n' || !keepNewlines) || r == utf8.RuneError && invalidAt(s, i) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && invalidAt(s, i):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' && keepNewlines:
			b.WriteByte('\n')
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case needsEscape(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case needsEscape(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// invalidAt reports whether the RuneError at s[i] stands for an invalid byte.
func invalidAt(s string, i int) bool {
	_, n := utf8.DecodeRuneInString(s[i:])
	return n == 1
}

// needsEscape: C0, DEL, C1 and the format characters (bidi overrides,
// zero-width characters).
func needsEscape(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// printable returns h with its strings made Printable (the message keeps its lines).
func (h Header) printable() Header {
	if len(h.Command) > 0 {
		cmd := make([]string, len(h.Command))
		for i, a := range h.Command {
			cmd[i] = Printable(a)
		}
		h.Command = cmd
	}
	h.ToolVersion = Printable(h.ToolVersion)
	h.Backend = Printable(h.Backend)
	h.HashMode = Printable(h.HashMode)
	h.Status = Status(Printable(string(h.Status)))
	h.Message = PrintableText(h.Message)
	if len(h.Devices) > 0 {
		ds := make([]string, len(h.Devices))
		for i, d := range h.Devices {
			ds[i] = Printable(d)
		}
		h.Devices = ds
	}
	if len(h.Findings) > 0 {
		fs := make([]verdict.Finding, len(h.Findings))
		for i, f := range h.Findings {
			fs[i] = printableFinding(f)
		}
		h.Findings = fs
	}
	// h.Rerun stays as recorded: it is run (when its executable's hash and
	// build info check out), never printed.
	return h
}

// printableFinding escapes the strings of a finding read from a trace.
func printableFinding(f verdict.Finding) verdict.Finding {
	f.Kind = verdict.Kind(Printable(string(f.Kind)))
	f.Cause, f.Fault, f.RevealedBy = Printable(f.Cause), Printable(f.Fault), Printable(f.RevealedBy)
	f.Message, f.Hint = PrintableText(f.Message), Printable(f.Hint)
	ref := func(o verdict.OpRef) verdict.OpRef {
		o.Op, o.Site, o.Call = Printable(o.Op), Printable(o.Site), Printable(o.Call)
		return o
	}
	refs := func(os []verdict.OpRef) []verdict.OpRef {
		out := make([]verdict.OpRef, len(os))
		for i, o := range os {
			out[i] = ref(o)
		}
		return out
	}
	if f.Ops != nil {
		f.Ops = refs(f.Ops)
	}
	if f.Blocked != nil {
		bs := make([]verdict.Blocked, len(f.Blocked))
		for i, b := range f.Blocked {
			b.Call = ref(b.Call)
			if b.Waiting != nil {
				b.Waiting = refs(b.Waiting)
			}
			bs[i] = b
		}
		f.Blocked = bs
	}
	if f.Candidates != nil {
		cs := make([]string, len(f.Candidates))
		for i, c := range f.Candidates {
			cs[i] = Printable(c)
		}
		f.Candidates = cs
	}
	return f
}
