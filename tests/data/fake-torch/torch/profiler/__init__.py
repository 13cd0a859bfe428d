"""torch.profiler: profile() checks its arguments like the real one."""
import enum


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 1


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    def handler(prof):
        prof.exported = (dir_name, worker_name, use_gzip)
    handler.args = (dir_name, worker_name, use_gzip)
    return handler


class profile(object):
    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None):
        self.flags = dict(record_shapes=record_shapes, profile_memory=profile_memory,
                          with_stack=with_stack, with_modules=with_modules)
        self.activities = activities
        self.on_trace_ready = on_trace_ready

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.on_trace_ready:
            self.on_trace_ready(self)
        return False
