# A 1F1B pipeline schedule over 4 stages (as Megatron's), its point-to-point
# traffic through batch_isend_irecv. With --wrong-order, stage 2 posts the
# receive of microbatch 0's gradient before the send of its activation (it
# skips its warmup and splits send_forward_recv_backward in the wrong order):
# stage 3 waits for the activation, stage 2 for the gradient (a hang).
import sys

import torch
import torch.distributed as dist

MICROBATCHES = 4
WRONG = "--wrong-order" in sys.argv

dist.init_process_group("gloo")
stage = dist.get_rank()
stages = dist.get_world_size()
first, last = stage == 0, stage == stages - 1


def exchange(ops):
    """Posts ops (P2POp list) together and waits for all of them."""
    if ops:
        for work in dist.batch_isend_irecv(ops):
            work.wait()


def recv_forward():
    act = torch.zeros(8)
    if not first:
        exchange([dist.P2POp(dist.irecv, act, stage - 1)])
    return act


def send_forward(out):
    if not last:
        exchange([dist.P2POp(dist.isend, out, stage + 1)])


def recv_backward():
    grad = torch.zeros(8)
    if not last:
        exchange([dist.P2POp(dist.irecv, grad, stage + 1)])
    return grad


def send_backward(grad):
    if not first:
        exchange([dist.P2POp(dist.isend, grad, stage - 1)])


def send_forward_recv_backward(out):
    grad = torch.zeros(8)
    if not last:
        exchange([dist.P2POp(dist.isend, out, stage + 1), dist.P2POp(dist.irecv, grad, stage + 1)])
    return grad


def send_backward_recv_forward(grad):
    act = torch.zeros(8)
    if not first:
        exchange([dist.P2POp(dist.isend, grad, stage - 1), dist.P2POp(dist.irecv, act, stage - 1)])
    return act


warmup = min(stages - stage - 1, MICROBATCHES)
if WRONG and stage == 2:
    warmup = 0
remaining = MICROBATCHES - warmup
for _ in range(warmup):
    send_forward(recv_forward() + 1)
act = recv_forward() if remaining > 0 else None
for i in range(remaining):
    out = act + 1
    if WRONG and stage == 2:
        grad = recv_backward()  # wrong order: waits for the gradient of the activation below
        send_forward(out)
    else:
        grad = send_forward_recv_backward(out)
    if i == remaining - 1:
        send_backward(grad * 2)
    else:
        act = send_backward_recv_forward(grad * 2)
for _ in range(warmup):
    send_backward(recv_backward() * 2)
dist.destroy_process_group()
