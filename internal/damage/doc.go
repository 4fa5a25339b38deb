// Package damage makes damaged and crafted trace files for tests: the
// hostile-input suites of recorder/trace and of the command generate their
// inputs with it at test time (truncations, bit flips, overwritten and
// zeroed pages, headers with valid checksums that lie).
package damage
