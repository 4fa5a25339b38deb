// Package hugepage asks the kernel to back large, long-lived Go
// allocations with transparent huge pages (2 MiB on x86-64 and arm64)
// instead of 4 KiB ones.
//
// Why: a replay of a 1024-rank all-to-all holds most of a gigabyte of ops,
// matching indexes and request tables live at once, each touched first at
// a random moment. With 4 KiB pages every first touch of a page is a page
// fault (on a VM, one the host takes too), and every random access to that
// gigabyte misses the TLB. Go does not ask for huge pages for its heap, and
// a machine whose transparent_hugepage setting is "madvise" (Debian's, and
// this project's CI machines') gives them only where asked.
//
// Make returns an ordinary Go slice: the garbage collector scans and frees
// it as any other; only the pages under it differ. Where the kernel has no
// transparent huge pages, or the slice is too small to hold a whole aligned
// huge page, Make is make.
package hugepage
