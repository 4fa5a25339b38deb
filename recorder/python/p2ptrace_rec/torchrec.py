"""p2ptrace's recorder for torch.distributed programs.

Installed by sitecustomize.py when P2PTRACE_SEGDIR is set: it wraps the
point-to-point calls of torch.distributed and writes what each did to the
rank's segment file, in the segment format of the MPI shim (version 3, see
recorder/mpi/doc.go, FORMAT), so that p2ptrace merges it like an MPI rank's.
Plain Python, standard library only, no pip.
"""

import atexit
import hashlib
import inspect
import mmap
import os
import struct
import sys
import threading
import time

MAGIC = b"P2PTSEG1"
VERSION = 3
HDR = 4096
# Header offset and size of the rank's tensor devices ("cpu", "cpu,cuda:0"),
# NUL terminated (recorder/mpi's segDevicesOff).
DEVICES, DEVICES_LEN = 984, 32

# Record types.
POST, DONE, COMM, SITE = 1, 2, 4, 5

# Call codes (recorder/mpi/segment.go, the torch.distributed ones).
C_SEND, C_RECV, C_ISEND, C_IRECV = 46, 47, 48, 49
C_BATCH, C_WAIT, C_ISCOMPLETED, C_BARRIER = 50, 51, 52, 53
C_DESTROY, C_NEWGROUP, C_EXCEPTION, C_EXIT = 44, 45, 54, 55
COLLECTIVES = {  # collectives other than barrier
    "all_reduce": 56, "broadcast": 57, "all_gather": 58, "reduce": 59,
    "reduce_scatter": 60, "all_to_all": 61, "gather": 62, "scatter": 63,
    # The single-tensor forms (FSDP's) and gloo's monitored barrier, from
    # 100 (after the shim's calls).
    "all_gather_into_tensor": 100, "reduce_scatter_tensor": 101,
    "all_to_all_single": 102, "monitored_barrier": 103,
}
# How each is recorded, as the MPI shim records its MPI counterpart: the
# trace.Op, the argument whose tensor (or list of tensors) is the caller's
# side of the type signature, the root's argument, and whether it reduces
# (its op is recorded). Members are compared as MPI's are (same collective
# in the same order, the same root, size, dtype and reduction op): NCCL and
# gloo require the same. reduce_scatter and all_to_all take lists whose
# sizes may differ by rank: recorded as the v variants (sizes not compared).
# all_gather_into_tensor is MPI_Allgather (its input is the caller's block),
# reduce_scatter_tensor MPI_Reduce_scatter_block (its output is the block),
# all_to_all_single MPI_Alltoall of input's equal blocks, or MPI_Alltoallv
# with split sizes (see collective_fields); monitored_barrier a barrier.
COLLECTIVE_OPS = {
    "all_reduce": (33, "tensor", None, True),
    "broadcast": (31, "tensor", "src", False),
    "all_gather": (38, "tensor", None, False),
    "reduce": (32, "tensor", "dst", True),
    "reduce_scatter": (42, "output", None, True),
    "all_to_all": (41, "input_tensor_list", None, False),
    "gather": (34, "tensor", "dst", False),
    "scatter": (36, "tensor", "src", False),
    "all_gather_into_tensor": (38, "input_tensor", None, False),
    "reduce_scatter_tensor": (43, "output", None, True),
    "all_to_all_single": (40, "input", None, False),
}
OP_ALLTOALL, OP_ALLTOALLV = 40, 41
# The send side of each collective called with async_op=True: the argument
# the backend only reads, and the root argument when only the root sends
# (broadcast's tensor is the others' receive side). It must not be written
# until the Work completes (as MPI-3.1 sec. 5.12 says of a nonblocking
# collective's buffers): hashed at the call and at Work.wait, a difference
# is an in-flight-mutation, as an isend's. all_reduce and reduce work in
# place: their one tensor is also written by the backend, not compared.
SEND_SIDES = {
    "broadcast": ("tensor", "src"),
    "scatter": ("scatter_list", "src"),
    "all_gather": ("tensor", None),
    "gather": ("tensor", None),
    "all_to_all": ("input_tensor_list", None),
    "all_to_all_single": ("input", None),
    "all_gather_into_tensor": ("input_tensor", None),
    "reduce_scatter": ("input_list", None),
    "reduce_scatter_tensor": ("input", None),
}
# Reduction op codes (trace.ReduceOp, the shim's RED_*) of torch's ReduceOp;
# the others (AVG, PREMUL_SUM) as a user-defined op: never compared.
REDUCE_OPS = {"MAX": 1, "MIN": 2, "SUM": 3, "PRODUCT": 4, "BAND": 6, "BOR": 8, "BXOR": 10}
RED_USER = 15

# trace.Op codes.
OP_SEND, OP_RECV, OP_ISEND, OP_IRECV, OP_WAIT = 1, 5, 6, 10, 11
OP_TEST, OP_GROUPSTART, OP_GROUPEND, OP_FINALIZE, OP_BARRIER = 14, 21, 22, 24, 25
# The nonblocking trace.Op of each collective's (async_op=True: the call
# returns a Work, which wait() or is_completed() completes, as MPI_Ibcast's
# request). torch.distributed's async call is the same collective as the
# blocking one: the trace's replays match the two (sim.Config.AsyncMatches).
ASYNC_OPS = {OP_BARRIER: 46, 31: 47, 32: 48, 33: 49, 34: 50, 36: 52, 38: 54, 40: 56, 41: 57, 42: 58, 43: 59}

# States.
RUNNING, BLOCKED, FINALIZED, ERRORED = 1, 2, 3, 5

# Field bits.
F_OP, F_DTYPE, F_FLAG, F_ERR, F_SEQ, F_MODULE, F_PEER, F_TAG, F_COMM = range(9)
F_INDEX, F_COUNT, F_BYTES, F_T0, F_T1, F_PC, F_REQ, F_HASH = range(9, 17)
F_SOURCE, F_STAG, F_SCOUNT, F_REQS, F_PATH = range(17, 22)
F_ADDR, F_SPAN, F_SITE = range(22, 25)  # the shim writes the buffer range; Python the site

# trace.Dtype codes by torch dtype name; the rest are Opaque (6), their bytes counted.
DTYPES = {"uint8": 1, "bool": 1, "int32": 2, "int64": 3, "float32": 4, "float64": 5}
OPAQUE = 6

_HERE = os.path.dirname(os.path.abspath(__file__))


def _uvarint(out, v):
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def _zz(out, v):
    _uvarint(out, (v << 1) ^ (v >> 63) if v < 0 else v << 1)


class Segment:
    """One rank's segment file, written through a shared mmap."""

    def __init__(self, path, rank, size, hash_mode):
        self.lock = threading.Lock()
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self.cap = HDR + (1 << 20)
        os.ftruncate(self.fd, self.cap)
        self.mm = mmap.mmap(self.fd, self.cap)
        self.used = 0
        self.calls = 0
        self.last_t = 0
        self.t_start = time.monotonic_ns()
        self.sites = {}
        self.devices = []
        h = self.mm
        struct.pack_into("<IIiiiI", h, 8, VERSION, HDR, rank, size, os.getpid(), RUNNING)
        struct.pack_into("<qq", h, 48, time.time_ns(), self.t_start)
        struct.pack_into("<I", h, 80, hash_mode)
        lib = ("torch.distributed %s (torch %s)" % (_backend(), _torch_version())).encode()[:255]
        h[128:128 + len(lib)] = lib
        h[0:8] = MAGIC  # last: the header is valid from here on

    def now(self):
        return time.monotonic_ns() - self.t_start

    def _grow(self, need):
        cap = self.cap
        while HDR + self.used + need > cap:
            cap *= 2
        os.ftruncate(self.fd, cap)
        self.mm.resize(cap)
        self.cap = cap

    def device(self, dev):
        """Notes a tensor device of the rank in the header (first use order)."""
        if dev in self.devices:
            return
        self.devices.append(dev)
        b = ",".join(self.devices).encode()[:DEVICES_LEN - 1]
        self.mm[DEVICES:DEVICES + DEVICES_LEN] = b + bytes(DEVICES_LEN - len(b))

    def site(self, where):
        """The id of a (file, line, function) site, written on first use."""
        sid = self.sites.get(where)
        if sid is None:
            sid = len(self.sites) + 1
            self.sites[where] = sid
            f, line, fn = where
            self._write(SITE, 0, {F_MODULE: sid, F_COUNT: line, F_PATH: (f + "\0" + fn).encode()})
        return sid

    def _write(self, typ, call, fields):
        body = bytearray()
        mask = 0
        for bit in sorted(fields) if len(fields) > 1 else fields:
            v = fields[bit]
            if not v and bit != F_PEER:
                continue
            if bit == F_PEER and v == 0:
                continue
            mask |= 1 << bit
            if bit <= F_ERR:
                body.append(v & 0xFF)
            elif bit in (F_SEQ, F_MODULE, F_PC, F_REQ, F_SITE):
                _uvarint(body, v)
            elif bit == F_HASH:
                body += struct.pack("<Q", v)
            elif bit == F_REQS:
                _uvarint(body, len(v))
                prev = 0
                for x in v:
                    _zz(body, x - prev)
                    prev = x
            elif bit == F_PATH:
                _uvarint(body, len(v))
                body += v
            elif bit == F_T0:
                _zz(body, v - self.last_t)
            elif bit == F_T1:
                _zz(body, v - (fields[F_T0] if fields.get(F_T0) else self.last_t))
            else:
                _zz(body, v)
        head = bytearray()
        _uvarint(head, mask)
        n = 5 + len(head) + len(body)
        if HDR + self.used + n > self.cap:
            self._grow(n)
        off = HDR + self.used
        struct.pack_into("<IB", self.mm, off, n | typ << 24, call)
        self.mm[off + 5:off + n] = bytes(head) + bytes(body)
        if fields.get(F_T1):
            self.last_t = fields[F_T1]
        elif fields.get(F_T0):
            self.last_t = fields[F_T0]
        self.used += n
        struct.pack_into("<Q", self.mm, 40, self.used)  # publish

    def record(self, typ, call, fields):
        self._write(typ, call, fields)

    def count_call(self):
        self.calls += 1
        struct.pack_into("<Q", self.mm, 32, self.calls)

    def set_state(self, state, call=0, site=0):
        if call:
            struct.pack_into("<I", self.mm, 84, call)
            struct.pack_into("<I", self.mm, 976, site)
        struct.pack_into("<I", self.mm, 28, state)

    def set_error(self, call, site, text):
        struct.pack_into("<I", self.mm, 108, call)
        struct.pack_into("<I", self.mm, 980, site)
        b = text.encode(errors="replace")[:511]
        self.mm[384:384 + len(b) + 1] = b + b"\0"

    def end(self, state):
        struct.pack_into("<q", self.mm, 64, time.time_ns())
        self.set_state(state)
        self.mm.flush()


def _backend():
    try:
        import torch.distributed as dist
        return str(dist.get_backend())
    except Exception:
        return "?"


def _torch_version():
    try:
        import torch
        return torch.__version__
    except Exception:
        return "?"


class Recorder:
    def __init__(self, dist, torch):
        self.dist = dist
        self.torch = torch
        self.seg = None
        self.seq = 0
        self.next_req = 1
        self.works = {}  # id(work) -> (work, req, post seq, kind, tensor, peer)
        self.groups = {}  # id(group) -> (group, comm id); peers are global ranks in torch's API
        self.ncomms = 0
        self.depth = 0
        self.batch_sites = []  # where each P2POp of the batch in progress was made
        self.finalized = False
        mode = os.environ.get("P2PTRACE_HASH", "full")
        self.hash_mode = {"full": 0, "sample": 1, "off": 2}.get(mode, 0)
        self.torch_dir = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep

    # --- helpers -------------------------------------------------------

    def where(self):
        """The user's file:line: the first frame outside torch and p2ptrace."""
        f = sys._getframe(2)
        while f is not None:
            fn = f.f_code.co_filename
            if not (fn.startswith(self.torch_dir) or fn.startswith(_HERE) or fn.startswith("<frozen")):
                return (_relative(fn), f.f_lineno, f.f_code.co_name)
            f = f.f_back
        return ("?", 0, "?")

    def hash(self, t):
        if self.hash_mode == 2 or t is None:
            return 0
        try:
            t = t.detach().cpu().contiguous().view(-1)
            b = t.view(self.torch.uint8).numpy().tobytes()
        except Exception:
            return 0
        if self.hash_mode == 1 and len(b) > 4096:
            b = b[:2048] + b[-2048:]
        return int.from_bytes(hashlib.blake2b(b, digest_size=8).digest(), "little") | 1

    def send_side(self, name, arguments):
        """The tensors an async collective only reads on this rank (see
        SEND_SIDES), None if none."""
        side = SEND_SIDES.get(name)
        if side is None or arguments is None:
            return None
        arg, root = side
        if root is not None:
            try:
                if arguments.get(root) != self.dist.get_rank():
                    return None
            except Exception:
                return None
        t = arguments.get(arg)
        if t is None:
            return None
        return list(t) if isinstance(t, (list, tuple)) else [t]

    def hash_all(self, tensors):
        """hash of a list of tensors (0: none, or hashing off)."""
        if not tensors or self.hash_mode == 2:
            return 0
        if len(tensors) == 1:
            return self.hash(tensors[0])
        hs = [self.hash(t) for t in tensors]
        if not all(hs):
            return 0
        b = b"".join(h.to_bytes(8, "little") for h in hs)
        return int.from_bytes(hashlib.blake2b(b, digest_size=8).digest(), "little") | 1

    def comm(self, group):
        if group is None or group is self.dist.GroupMember.WORLD:
            return 0
        g = self.groups.get(id(group))
        return g[1] if g is not None and g[0] is group else 0

    def tfields(self, t):
        try:
            self.ensure().device(str(t.device))
        except Exception:
            pass
        try:
            n = t.numel()
            return {F_DTYPE: DTYPES.get(str(t.dtype).replace("torch.", ""), OPAQUE), F_COUNT: n,
                    F_BYTES: n * t.element_size()}
        except Exception:
            return {}

    def ensure(self):
        if self.seg is None:
            d = os.environ["P2PTRACE_SEGDIR"]
            rank, size = self.dist.get_rank(), self.dist.get_world_size()
            self.seg = Segment(os.path.join(d, "rank-%d.seg" % rank), rank, size, self.hash_mode)
        return self.seg

    def post(self, call, fields, blocking, where=None):
        s = self.ensure()
        site = s.site(where or self.where())
        fields[F_SITE] = site
        s.record(POST, call, fields)
        seq = self.seq
        self.seq += 1
        s.count_call()
        if blocking:
            s.set_state(BLOCKED, call, site)
        return seq, site

    def done(self, call, seq, fields):
        s = self.seg
        fields[F_SEQ] = seq
        fields.setdefault(F_T1, s.now())
        s.record(DONE, call, fields)

    def returned(self, call, seq, fields=None):
        f = dict(fields or {})
        self.done(call, seq, f)
        self.seg.count_call()
        self.seg.set_state(RUNNING)

    # --- wrappers ------------------------------------------------------

    def wrap_blocking_p2p(self, orig, send):
        rec = self

        def wrapper(tensor, *args, **kw):
            if rec.finalized or not rec.dist.is_initialized():
                return orig(tensor, *args, **kw)
            peer, group, tag = _peer_args(args, kw, send)
            if group is not None and rec.not_member(group):
                return orig(tensor, *args, **kw)  # a no-op in torch (with a warning)
            s = rec.ensure()
            call = C_SEND if send else C_RECV
            f = {F_OP: OP_SEND if send else OP_RECV, F_PEER: -1 if peer is None else peer, F_TAG: tag,
                 F_COMM: rec.comm(group), F_T0: s.now()}
            f.update(rec.tfields(tensor))
            if send:
                f[F_HASH] = rec.hash(tensor)
            seq, _ = rec.post(call, f, True)
            ret = orig(tensor, *args, **kw)
            d = {}
            if send:
                d[F_HASH] = rec.hash(tensor)
            else:
                src = ret if isinstance(ret, int) and ret >= 0 else peer
                d.update({F_SOURCE: src, F_STAG: tag, F_SCOUNT: f.get(F_COUNT, 0), F_HASH: rec.hash(tensor)})
            rec.returned(call, seq, d)
            return ret
        return wrapper

    def wrap_nonblocking_p2p(self, orig, send):
        rec = self

        def wrapper(tensor, *args, **kw):
            if rec.finalized or not rec.dist.is_initialized():
                return orig(tensor, *args, **kw)
            peer, group, tag = _peer_args(args, kw, send)
            if group is not None and rec.not_member(group):
                return orig(tensor, *args, **kw)  # a no-op in torch (with a warning)
            s = rec.ensure()
            t0 = s.now()
            h = rec.hash(tensor) if send else 0
            work = orig(tensor, *args, **kw)
            req = rec.next_req
            rec.next_req += 1
            f = {F_OP: OP_ISEND if send else OP_IRECV, F_PEER: -1 if peer is None else peer, F_TAG: tag,
                 F_COMM: rec.comm(group), F_T0: t0, F_T1: s.now(), F_REQ: req, F_HASH: h}
            f.update(rec.tfields(tensor))
            where = rec.batch_sites.pop(0) if rec.depth > 0 and rec.batch_sites else None
            seq, _ = rec.post(C_ISEND if send else C_IRECV, f, False, where)
            if work is not None:
                rec.works[id(work)] = (work, req, seq, send, tensor, peer, tag, f.get(F_COUNT, 0))
            return work
        return wrapper

    def complete(self, w):
        """Writes the done record of a completed isend/irecv, or of a
        collective called with async_op=True (send None)."""
        if w[3] is None:
            d = {}
            if len(w) > 5 and w[5] is not None:
                d[F_HASH] = self.hash_all(w[5])  # the send side again (see SEND_SIDES)
            self.done(w[4], w[2], d)
            return
        work, req, seq, send, tensor, peer, tag, count = w
        d = {F_HASH: self.hash(tensor)}
        if not send:
            src = peer
            try:
                src = work._source_rank() if peer is None else peer
            except Exception:
                pass
            d.update({F_SOURCE: src, F_STAG: tag, F_SCOUNT: count})
        self.done(C_ISEND if send else C_IRECV, seq, d)

    def wrap_wait(self, orig):
        rec = self

        def wait(work, *args, **kw):
            w = rec.works.get(id(work))
            if w is None or w[0] is not work or rec.seg is None:
                return orig(work, *args, **kw)
            s = rec.seg
            seq, _ = rec.post(C_WAIT, {F_OP: OP_WAIT, F_T0: s.now(), F_REQS: [w[1]]}, True)
            ret = orig(work, *args, **kw)
            del rec.works[id(work)]
            rec.complete(w)
            rec.returned(C_WAIT, seq)
            return ret
        return wait

    def wrap_is_completed(self, orig):
        rec = self

        def is_completed(work, *args, **kw):
            ret = orig(work, *args, **kw)
            w = rec.works.get(id(work))
            if w is None or w[0] is not work or rec.seg is None:
                return ret
            s = rec.seg
            t = s.now()
            seq, _ = rec.post(C_ISCOMPLETED, {F_OP: OP_TEST, F_T0: t, F_REQS: [w[1]]}, False)
            if ret:
                del rec.works[id(work)]
                rec.complete(w)
            rec.done(C_ISCOMPLETED, seq, {F_FLAG: 1 if ret else 0, F_T1: s.now()})
            return ret
        return is_completed

    def wrap_batch(self, orig):
        rec = self

        def batch_isend_irecv(p2p_op_list):
            if rec.finalized or not rec.dist.is_initialized() or rec.depth > 0:
                return orig(p2p_op_list)
            s = rec.ensure()
            seq, _ = rec.post(C_BATCH, {F_OP: OP_GROUPSTART, F_T0: s.now()}, False)
            rec.done(C_BATCH, seq, {})
            rec.depth += 1
            rec.batch_sites = [getattr(op, "_p2ptrace_site", None) for op in p2p_op_list]
            try:
                ret = orig(p2p_op_list)
            finally:
                rec.depth -= 1
            seq, _ = rec.post(C_BATCH, {F_OP: OP_GROUPEND, F_T0: s.now()}, False)
            rec.done(C_BATCH, seq, {})
            return ret
        return batch_isend_irecv

    def wrap_collective(self, orig, call, name=None):
        rec = self
        how = COLLECTIVE_OPS.get(name)
        try:
            sig = inspect.signature(orig)
        except (TypeError, ValueError):
            sig = None

        def collective(*args, **kw):
            if rec.finalized or not rec.dist.is_initialized():
                return orig(*args, **kw)
            bound = None
            if sig is not None:
                try:
                    bound = sig.bind(*args, **kw)
                    bound.apply_defaults()
                except TypeError:
                    bound = None
            group = bound.arguments.get("group") if bound is not None else kw.get("group")
            if group is None and bound is None:
                for a in args:
                    if isinstance(a, rec.dist.ProcessGroup):
                        group = a
            if group is not None and rec.not_member(group):
                return orig(*args, **kw)  # torch makes it a no-op (with a warning): no call of the group
            size = rec.dist.get_world_size(group) if group is not None else rec.dist.get_world_size()
            s = rec.ensure()
            f = {F_OP: OP_BARRIER, F_COMM: rec.comm(group), F_COUNT: size, F_T0: s.now()}
            if how is not None and bound is not None:
                f.update(rec.collective_fields(how, bound.arguments, group, size))
            async_op = bound.arguments.get("async_op") if bound is not None else kw.get("async_op")
            if async_op and f[F_OP] in ASYNC_OPS:
                # Posted once the call returned, with the request its Work
                # completes (as an isend's); its send side hashed before.
                f[F_OP] = ASYNC_OPS[f[F_OP]]
                sent = rec.send_side(name, bound.arguments if bound is not None else None)
                h = rec.hash_all(sent)
                work = orig(*args, **kw)
                req = rec.next_req
                rec.next_req += 1
                f[F_REQ], f[F_T1] = req, s.now()
                if h:
                    f[F_HASH] = h
                seq, _ = rec.post(call, f, False)
                if work is not None:
                    rec.works[id(work)] = (work, req, seq, None, call, sent if h else None)
                return work
            seq, _ = rec.post(call, f, True)
            ret = orig(*args, **kw)
            rec.returned(call, seq)
            return ret
        return collective

    def not_member(self, group):
        """Whether this rank is outside group (torch's collectives on it are
        no-ops here; its size reads -1)."""
        try:
            return self.dist.distributed_c10d._rank_not_in_group(group)
        except Exception:
            try:
                return self.dist.get_world_size(group) < 0
            except Exception:
                return False

    def collective_fields(self, how, arguments, group, size):
        """The fields of a collective call besides its communicator and size
        (as the shim's coll_enter): its op, root (world rank), the caller's
        rank in the group, its side's dtype and bytes, its reduction op."""
        op, side, root_arg, reduces = how
        per_peer = False
        if op == OP_ALLTOALL:
            if arguments.get("input_split_sizes") is not None or arguments.get("output_split_sizes") is not None:
                op = OP_ALLTOALLV  # the caller's whole input: sizes not compared
            else:
                per_peer = True  # MPI_Alltoall's side: one peer's block
        f = {F_OP: op, F_PEER: -1}
        try:
            f[F_TAG] = self.dist.get_rank(group) if group is not None else self.dist.get_rank()
        except Exception:
            pass
        if root_arg is not None:
            root = arguments.get(root_arg)
            if isinstance(root, int):
                f[F_PEER] = root  # torch's src and dst are world ranks
        t = arguments.get(side)
        tensors = t if isinstance(t, (list, tuple)) else [t]
        try:
            dtypes = {DTYPES.get(str(x.dtype).replace("torch.", ""), OPAQUE) for x in tensors}
            f[F_DTYPE] = dtypes.pop() if len(dtypes) == 1 else OPAQUE
            f[F_BYTES] = sum(x.numel() * x.element_size() for x in tensors)
            if per_peer and size > 0:
                f[F_BYTES] //= size
            self.ensure().device(str(tensors[0].device))
        except Exception:
            pass
        if reduces:
            f[F_INDEX] = self.reduce_op(arguments.get("op"))
        return f

    def reduce_op(self, op):
        ro = self.dist.ReduceOp
        for name, code in REDUCE_OPS.items():
            try:
                if op == getattr(ro, name):
                    return code
            except Exception:
                pass
        return RED_USER

    def wrap_new_group(self, orig):
        rec = self

        def new_group(ranks=None, *args, **kw):
            g = orig(ranks, *args, **kw)
            rec.ncomms += 1
            cid = rec.ncomms  # every rank calls new_group in the same order
            members = sorted(ranks) if ranks is not None else list(range(rec.dist.get_world_size()))
            if g is not None and g is not rec.dist.GroupMember.NON_GROUP_MEMBER:
                rec.groups[id(g)] = (g, cid)  # the group is kept, so its id is never reused
            s = rec.ensure()
            site = s.site(rec.where())  # where the program made the group, for reports that name it
            s.record(COMM, C_NEWGROUP, {F_COMM: cid, F_PEER: 0, F_COUNT: len(members), F_REQS: members, F_SITE: site})
            return g
        return new_group

    def wrap_p2pop_init(self, orig):
        rec = self

        def __init__(op, *args, **kw):
            orig(op, *args, **kw)
            try:
                op._p2ptrace_site = rec.where()  # an op's site is where the program made it
            except AttributeError:
                pass
        return __init__

    def wrap_init(self, orig):
        rec = self

        def init_process_group(*args, **kw):
            ret = orig(*args, **kw)
            rec.ensure()  # every rank has a segment from here on, calls or not
            return ret
        return init_process_group

    def wrap_destroy(self, orig):
        rec = self

        def destroy_process_group(group=None):
            if group is None and rec.seg is not None and not rec.finalized:
                rec.finalize(C_DESTROY)
            return orig(group)
        return destroy_process_group

    def finalize(self, call):
        s = self.seg
        seq, _ = self.post(call, {F_OP: OP_FINALIZE, F_T0: s.now()}, False)
        self.done(call, seq, {})
        self.finalized = True
        s.end(FINALIZED)

    def at_exit(self):
        if self.seg is not None and not self.finalized:
            self.finalize(C_EXIT)

    def excepthook(self, orig):
        rec = self

        def hook(typ, value, tb):
            if rec.seg is None and not rec.finalized and rec.dist.is_initialized():
                rec.ensure()
            if rec.seg is not None and not rec.finalized:
                where = ("?", 0, "?")
                t = tb
                while t is not None:
                    fn = t.tb_frame.f_code.co_filename
                    if not (fn.startswith(rec.torch_dir) or fn.startswith(_HERE)):
                        where = (_relative(fn), t.tb_lineno, t.tb_frame.f_code.co_name)
                    t = t.tb_next
                s = rec.seg
                site = s.site(where)
                s.set_error(C_EXCEPTION, site, "%s: %s" % (typ.__name__, value))
                rec.finalized = True
                s.end(ERRORED)
            orig(typ, value, tb)
        return hook


_RELATIVE = {}


def _relative(fn):
    """fn relative to the working directory when under it, else as is."""
    rel = _RELATIVE.get(fn)
    if rel is None:
        rel = _RELATIVE[fn] = _relative_uncached(fn)
    return rel


def _relative_uncached(fn):
    if os.path.isabs(fn):
        rel = os.path.relpath(fn)
        if not rel.startswith(".." + os.sep):
            return rel
    return fn


def _peer_args(args, kw, send):
    """(peer, group, tag) of send(tensor, dst, group, tag) / recv(tensor, src, group, tag)."""
    names = ("dst" if send else "src", "group", "tag")
    vals = dict(zip(names, args))
    vals.update({k: v for k, v in kw.items() if k in names})
    return vals.get(names[0]), vals.get("group"), vals.get("tag", 0) or 0


def install():
    import torch
    import torch.distributed as dist
    rec = Recorder(dist, torch)
    c10d = dist.distributed_c10d
    patches = {
        "send": rec.wrap_blocking_p2p(c10d.send, True),
        "recv": rec.wrap_blocking_p2p(c10d.recv, False),
        "isend": rec.wrap_nonblocking_p2p(c10d.isend, True),
        "irecv": rec.wrap_nonblocking_p2p(c10d.irecv, False),
        "batch_isend_irecv": rec.wrap_batch(c10d.batch_isend_irecv),
        "barrier": rec.wrap_collective(c10d.barrier, C_BARRIER),
        "new_group": rec.wrap_new_group(c10d.new_group),
        "destroy_process_group": rec.wrap_destroy(c10d.destroy_process_group),
        "init_process_group": rec.wrap_init(c10d.init_process_group),
    }
    for name, code in COLLECTIVES.items():
        if hasattr(c10d, name):
            patches[name] = rec.wrap_collective(getattr(c10d, name), code, name)
    for name, fn in patches.items():
        setattr(c10d, name, fn)
        setattr(dist, name, fn)
    c10d.P2POp.__init__ = rec.wrap_p2pop_init(c10d.P2POp.__init__)
    work = c10d.Work
    work.wait = rec.wrap_wait(work.wait)
    work.is_completed = rec.wrap_is_completed(work.is_completed)
    atexit.register(rec.at_exit)
    sys.excepthook = rec.excepthook(sys.excepthook)
    return rec
