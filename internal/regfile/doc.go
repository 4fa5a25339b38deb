// Package regfile opens input files that must be regular files (traces,
// segments): a FIFO, a device or a socket given as one is refused at once,
// never opened in a way that blocks (a FIFO's open waits for a writer, its
// read for data that never comes) or read without end (/dev/zero).
package regfile
