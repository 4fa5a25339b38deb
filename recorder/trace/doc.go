// Package trace is the p2ptrace trace file: the writer a recorder streams
// events into, and the reader that show, verify, export and replay use.
//
// A trace holds one recording of a multi-rank program: a Header (format
// version, command line, world size, backend, link model, start and end
// times, Status), the call-site table, optional payloads (message contents,
// content-addressed by their hash), and, per rank, the events of its
// point-to-point calls in program order. Each call is two events: a KindPost
// event when the call is made, and a KindDone event when it completes (see
// Event).
//
// Writing:
//
//	w, err := trace.Create("run.p2ptrace", trace.Header{WorldSize: 4}, trace.WriterOptions{})
//	...
//	w.Append(&ev) // from the recorder, for every event
//	...
//	err = w.Close(trace.StatusComplete, "")
//
// Append encodes the event into an in-memory block of its rank (no
// allocation, a few tens of nanoseconds); a single background goroutine
// writes full blocks, and every 100 ms every rank's open block as it is so
// far, so a recorder that is killed loses at most about the last 100 ms.
// Its trace then keeps Status running: readers accept it and report it as
// cut short (Reader.Incomplete). A timed flush does not end the open block:
// the rank's next events go on filling it, and the next flush stores it
// again, under the same key, until it is full. Blocks are therefore full
// (BlockSize) whatever the flush timing; the rewrites cost write
// bandwidth, not file size. Close leaves the file holding its data: it
// truncates bbolt's growth slack and, when the old versions of rewritten
// blocks left more than an eighth of the pages free, replaces the file by
// a compacted copy (written beside it, synced, renamed over it: the path
// is a complete trace at every moment).
//
// Reading:
//
//	r, err := trace.Open("run.p2ptrace")
//	...
//	defer r.Close()
//	c := r.Rank(0)
//	var ev trace.Event
//	for c.Next(&ev) { ... }
//	if err := c.Err(); err != nil { ... }
//
// A Reader streams block by block and never loads the whole file. Open
// checks the file before trusting it: a damaged, foreign or newer file is an
// error (ErrDamaged, ErrNotTrace, ErrNewerVersion) that names the file and
// the problem, never a panic. Verify checks every block. A FIFO or device
// is refused before anything is read from it; a trace a writer holds is
// ErrLocked, "being recorded (by pid N)", never read while it changes; the
// number of ranks is bounded by what the file holds (readers allocate per
// rank); strings leave the Reader with control characters escaped
// (Printable).
//
// # FORMAT
//
// Format version 1 (FormatVersion). A trace is a bbolt (go.etcd.io/bbolt)
// file with four top-level buckets:
//
//	meta      "magic"  -> the 15 bytes "p2ptrace trace\n" (Magic); a bbolt
//	                      file without it is not a trace
//	          "header" -> Header as JSON (keys as in the Header struct tags):
//	                      format_version, tool_version, command, ranks,
//	                      backend, eager_limit, latency_ns,
//	                      bandwidth_bytes_per_s, seed, hash, hash_algo
//	                      (the payload hash function, Header.HashAlgo:
//	                      absent in older traces, which are xxh64),
//	                      start_unix_ns, end_unix_ns, status, message,
//	                      events, rank_events
//	          "header_crc32c" -> CRC32C (LE uint32) of the header JSON
//	sites     uint32 BE site ID -> uvarint line, uvarint len + function,
//	                      uvarint len + file, CRC32C (LE uint32) of the rest
//	payloads  uint64 BE hash -> CRC32C (LE uint32) of the data, then the data
//	                      (at most WriterOptions.PayloadCap bytes each)
//	ranks     sub-bucket per rank, key uint32 BE rank:
//	          uint64 BE block index (0, 1, 2... without gaps) -> block
//
// Every block of a rank but its last holds about BlockSize bytes of events
// (older writers cut a rank's block at every timed
// flush, leaving many short blocks: the format is the same, and readers
// read both). While a recording runs, the last block of a rank is rewritten
// in place (same key, more events) until it is full.
//
// The header is written with status "running" when the file is created and
// rewritten when the recording ends with the final status ("complete",
// "hung", "crashed"), end time, message and event counts (events,
// rank_events). A header still "running" means the recorder was killed: the
// blocks written so far are valid. A reader refuses a format_version greater
// than its own FormatVersion; the magic, header and header_crc32c keys keep
// their meaning in every version, so that an older reader can say so.
//
// A block is one bbolt value holding many consecutive events of one rank:
//
//	CRC32C (Castagnoli, LE uint32) of everything after it
//	uvarint rank (equal to the bucket's)
//	uvarint number of events
//	events
//
// Every block decodes on its own: the state below starts from zero in each
// block. An event is
//
//	uvarint tag  = Op<<1 | 1 if KindDone (0 if KindPost)
//	uvarint mask = the fields present, bit i for field i (below)
//	the present fields, in bit order
//
// Each field is first mapped to a uint64 "transformed value" (zz is the
// zigzag map of a signed value; differences wrap around in 64 bits). A field
// is present in the mask when its transformed value differs from that of the
// previous event of the same context in the block (context: Op&63 and the
// kind; zero before the first such event), so repeating patterns and zero
// fields cost nothing. Values are uvarints except the hashes, 8 bytes LE.
// The running state of the rank in the block: next (Seq of the previous post
// event + 1), lastReq (last nonzero Req of a post), lastVT and lastWall (the
// PostVT/PostWall of the previous post event, DoneVT/DoneWall of the
// previous done event). Fields, with their transforms:
//
//	 0 PostWall   post: zz(PostWall-lastWall); done: zz(PostWall)
//	 1 DoneWall   done: zz(DoneWall-lastWall); post: zz(DoneWall)
//	 2 PostVT     post: zz(PostVT-lastVT);     done: zz(PostVT)
//	 3 DoneVT     done: zz(DoneVT-lastVT);     post: zz(DoneVT)
//	 4 MatchVT    done: zz(DoneVT-MatchVT);    post: zz(MatchVT)
//	 5 Seq        post: zz(Seq-next);          done: zz(next-1-Seq)
//	 6 Req        post: 0 if Req is 0, else zz(Req-lastReq), plus one
//	              when below zz(-lastReq) (a bijection); done: Req
//	 7 MatchSeq   done: zz(MatchSeq-Seq);      post: MatchSeq
//	 8 Reqs       bytes, compared as bytes: uvarint count, then each request
//	              as zz(req - previous), the first relative to lastReq;
//	              an empty list (the initial context) is the single byte 0
//	 9 Peer zz   10 Tag zz   11 Bytes zz   12 Count zz   13 Dtype
//	14 Site      15 MatchRank zz(MatchRank-rank)   16 Source zz
//	17 StatusTag zz   18 StatusCnt zz   19 Comm zz   20 Stream zz
//	21 Group zz  22 Alloc   23 Offset zz   24 Length zz   25 Duration zz
//	26 Flag (0 or 1)   27 Index zz   28 Err   29 HashPost   30 HashDone
//
// After the event the state advances: a post event sets next = Seq+1,
// lastVT/lastWall from its post times and lastReq if Req is nonzero; a done
// event sets lastVT/lastWall from its done times. Rank is the block's.
// An empty Reqs decodes as an empty (or nil) slice.
//
// Writers set FillPercent 1.0 on every bucket (keys are appended in order)
// and size blocks (DefaultBlockSize) to fill whole bbolt pages; a ring
// trace (Isend/Irecv/Waitall, no hashes) uses about 4.9 bytes per event
// (BenchmarkBytesPerEvent). A finished file is its pages (no growth
// slack): the ring recorded by `p2ptrace record` with full hashes (1024
// ranks, 163 rounds, 1.0M events) is 12.6 bytes per event, 11.9 of them
// the blocks (BenchmarkRecordedRingSize).
package trace

// FormatVersion is the version of the file format described in FORMAT,
// stored in Header.FormatVersion.
const FormatVersion = 1
