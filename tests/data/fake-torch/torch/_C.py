"""torch._C: the OOM observers the allocator calls (torch >= 2.0)."""
import torch

_oom_observers = []


def _cuda_attach_out_of_memory_observer(observer):
    _oom_observers.append(observer)


if torch._V < (2, 0):
    del _cuda_attach_out_of_memory_observer
