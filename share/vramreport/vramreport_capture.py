"""vramreport_capture: record what vramreport needs from a PyTorch job.

Usage (copy this file next to your training script, or put its folder on
PYTHONPATH; `vramreport capture-help` says where it is installed):

    import torch, vramreport_capture
    vramreport_capture.enable()              # allocator history on; dump on OOM
    kw = vramreport_capture.profiler_kwargs(trace_dir="vramreport-capture/profiler")
    with torch.profiler.profile(**kw) as prof:
        train()                              # then: vramreport vramreport-capture/ -o report.html

What it writes, into out_dir/<time>-<rank>-<reason>/ (a new folder per
dump, never overwriting anything; each file written under a temporary
name, then renamed):
  <tag>.snapshot.pickle      the caching allocator's snapshot with its
                             recorded history (torch.cuda.memory._dump_snapshot)
  <tag>.memory_stats.json    torch.cuda.memory_stats() of the device, with
                             the device index, the rank and the world size
  <tag>.memory_summary.txt   torch.cuda.memory_summary() of the device
  <tag>.nvidia-smi.txt       nvidia-smi --query-gpu (memory used by every
                             process) and --query-compute-apps, one capture
where <tag> is rank<N> (torch.distributed, or the RANK variable) or
pid<N>. A dump happens on every CUDA out-of-memory error (PyTorch's OOM
observer, called before the error is raised; at most max_dumps of them),
or when you call dump("reason").

Safe to leave in: it never raises into training (a feature your torch lacks
is skipped with a warning), reads nothing back (no pickle is loaded),
uses no network, and starts nvidia-smi only at a dump, with a timeout.
Works on torch >= 1.13; newer torch records more (stacks, the OOM observer).
Dependency-free: torch is imported when enable() or dump() is called.
Docs: docs/capture.md in vramreport's sources.
"""

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import warnings

__all__ = ["enable", "disable", "dump", "profiler_kwargs", "oom_guard", "CaptureWarning"]

# The nvidia-smi queries vramreport's CSV reader reads (src/import/readers/nvsmi/nvsmi_csv.c),
# written as one capture: each output under a head of '#' rules naming the
# command (src/import/readers/nvsmi/nvsmi_capture.c), so that the GPU each names is one.
NVSMI_QUERIES = (
    ("GPUs", "--query-gpu=timestamp,index,uuid,pci.bus_id,name,memory.total,memory.used,"
             "memory.free,utilization.gpu"),
    ("processes", "--query-compute-apps=timestamp,gpu_uuid,gpu_bus_id,pid,process_name,"
                  "used_gpu_memory"),
)
NVSMI_RULE = "#" * 80
NVSMI_TIMEOUT_S = 10

# The profiler flags that give vramreport memory events with categories,
# shapes, Python stacks and module names.
PROFILER_FLAGS = {"profile_memory": True, "record_shapes": True, "with_stack": True,
                  "with_modules": True}


class CaptureWarning(UserWarning):
    """A feature this torch lacks, or a part of a dump that could not be written."""


def _warn(msg):
    warnings.warn("vramreport_capture: " + msg, CaptureWarning, stacklevel=3)


def _note(msg):
    sys.stderr.write("vramreport_capture: %s\n" % msg)


class _State(object):
    """What enable() set up: one per process."""

    def __init__(self):
        self.lock = threading.Lock()
        self.enabled = False
        self.out_dir = "vramreport-capture"
        self.nvidia_smi = True
        self.max_dumps = 5
        self.dumps = 0
        self.observer_attached = False
        self.observer_registered = False


_state = _State()


def _torch():
    """torch, or None (with a warning) when it cannot be imported."""
    try:
        import torch  # noqa: F401 - imported lazily: this file needs no torch to load
        return torch
    except Exception as e:  # noqa: BLE001 - never break the caller
        _warn("torch cannot be imported (%s): nothing is recorded" % e)
        return None


def _cuda_memory(torch):
    return getattr(getattr(torch, "cuda", None), "memory", None)


# --- allocator history ----------------------------------------------------

def _history_attempts(max_entries, stacks):
    """The calls of torch.cuda.memory._record_memory_history, newest
    signature first, with what each lacks: torch >= 2.1 (enabled, context,
    stacks, max_entries), torch 2.0 (enabled: bool,
    trace_alloc_max_entries, trace_alloc_record_context), torch 1.13
    (enabled: bool)."""
    # torch 2.0 records Python stacks: a loss only when more was asked.
    no_stacks = "" if stacks == "python" else \
        "torch < 2.1: stacks=%r not supported, Python stacks only" % stacks
    return [
        ("", {"enabled": "all", "context": "all", "stacks": stacks, "max_entries": max_entries}),
        (no_stacks,
         {"enabled": True, "trace_alloc_max_entries": max_entries,
          "trace_alloc_record_context": True}),
        ("torch < 2.0: no allocation history (only the stacks of live blocks)",
         {"enabled": True}),
    ]


def _record_history(torch, max_entries, stacks):
    """Starts the recording (max_entries None: stops it); True when done."""
    record = getattr(_cuda_memory(torch), "_record_memory_history", None)
    if record is None:
        _warn("torch %s has no torch.cuda.memory._record_memory_history: snapshots will "
              "have no history" % getattr(torch, "__version__", "?"))
        return False
    # A bool False stops it in every version (2.1+ take it the old way).
    attempts = [("", {"enabled": False})] if max_entries is None else \
        _history_attempts(max_entries, stacks)
    for degraded, kwargs in attempts:
        try:
            record(**kwargs)
        except TypeError:
            continue  # an older signature: try the next one
        except Exception as e:  # noqa: BLE001 - e.g. CUDA not available
            _warn("allocator history not switched: %s" % e)
            return False
        if degraded:
            _warn(degraded)
        return True
    _warn("torch.cuda.memory._record_memory_history takes none of the known signatures")
    return False


# --- the OOM observer -----------------------------------------------------

def _on_oom(device, alloc, device_alloc, device_free):
    """Called by PyTorch's allocator before it raises OutOfMemoryError:
    (device index, bytes requested, bytes allocated on the device, bytes
    free on the device). Must never raise."""
    try:
        if not _state.enabled:
            return
        _note("CUDA OOM on cuda:%s: %d bytes requested, %d allocated, %d free on the device"
              % (device, alloc, device_alloc, device_free))
        if _state.dumps >= _state.max_dumps:
            _note("not dumped: max_dumps=%d reached" % _state.max_dumps)
            return
        _state.dumps += 1
        _dump("oom", device)
    except BaseException as e:  # noqa: BLE001 - inside the allocator: swallow everything
        try:
            _note("dump on OOM failed: %r" % (e,))
        except BaseException:  # noqa: BLE001
            pass


def _attach_observer(torch):
    """Registers _on_oom once per process (PyTorch has no way to remove an
    observer: disable() makes it do nothing)."""
    if _state.observer_registered:
        return True
    attach = getattr(getattr(torch, "_C", None), "_cuda_attach_out_of_memory_observer", None)
    if attach is None:
        _warn("torch %s has no OOM observer (torch._C._cuda_attach_out_of_memory_observer): "
              "wrap the training loop in vramreport_capture.oom_guard() or call "
              "vramreport_capture.dump('oom') where you catch the error"
              % getattr(torch, "__version__", "?"))
        return False
    try:
        attach(_on_oom)
    except Exception as e:  # noqa: BLE001
        _warn("OOM observer not attached: %s" % e)
        return False
    _state.observer_registered = True
    return True


def enable(out_dir="vramreport-capture", max_entries=100000, stacks="python",
           nvidia_smi=True, max_dumps=5):
    """Turns on the allocator's history (the last max_entries allocations
    and frees, each with its stack: "python" keeps it cheap, "all" adds C++
    frames) and a dump into out_dir on every CUDA OOM. Returns True when
    both are on; never raises."""
    try:
        torch = _torch()
        if torch is None:
            return False
        with _state.lock:
            _state.out_dir = out_dir
            _state.nvidia_smi = nvidia_smi
            _state.max_dumps = max_dumps
            _state.enabled = True
        history = _record_history(torch, max_entries, stacks)
        _state.observer_attached = _attach_observer(torch)
        return history and _state.observer_attached
    except Exception as e:  # noqa: BLE001
        _warn("enable failed: %r" % (e,))
        return False


def disable():
    """Stops the history recording and the dumps on OOM."""
    try:
        _state.enabled = False
        torch = _torch()
        if torch is not None:
            _record_history(torch, None, None)
    except Exception as e:  # noqa: BLE001
        _warn("disable failed: %r" % (e,))


# --- the dump -------------------------------------------------------------

def _rank():
    """(rank, world size), each None when unknown: torch.distributed when it
    is initialised, else the RANK and WORLD_SIZE variables launchers set."""
    dist = getattr(sys.modules.get("torch"), "distributed", None)
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    except Exception:  # noqa: BLE001
        pass

    def env_int(name):
        try:
            return int(os.environ[name])
        except (KeyError, ValueError):
            return None
    return env_int("RANK"), env_int("WORLD_SIZE")


def _tag(rank):
    return "rank%d" % rank if rank is not None else "pid%d" % os.getpid()


def _new_folder(out_dir, tag, reason):
    """out_dir/<UTC time>-<tag>-<reason>[-N]: created here, so no one else's."""
    reason = re.sub(r"[^A-Za-z0-9_.-]+", "-", str(reason))[:40].strip("-.") or "dump"
    base = os.path.join(out_dir, "%s-%s-%s" % (time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()),
                                               tag, reason))
    os.makedirs(out_dir, exist_ok=True)
    for n in range(1000):
        path = base if n == 0 else "%s-%d" % (base, n)
        try:
            os.mkdir(path)
            return path
        except FileExistsError:
            continue
    raise OSError("no free folder name for %s" % base)


def _write_atomic(folder, name, write):
    """Writes folder/name through a temporary file and a rename, so a reader
    never sees half a file; an existing file is never replaced."""
    final = os.path.join(folder, name)
    if os.path.lexists(final):
        raise FileExistsError(final)
    tmp = os.path.join(folder, ".%s.tmp%d" % (name, os.getpid()))
    try:
        write(tmp)
        os.rename(tmp, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return final


def _write_text(make_text):
    """A writer of the text make_text() returns, called at write time so
    that its failure loses that part only."""
    def write(path):
        text = make_text()
        with open(path, "x", encoding="utf-8") as f:
            f.write(text)
    return write


def _snapshot_writer(memory):
    """torch.cuda.memory._dump_snapshot, or what it does (torch < 2.1):
    pickle.dump of _snapshot()."""
    if hasattr(memory, "_dump_snapshot"):
        return lambda path: memory._dump_snapshot(path)
    if not hasattr(memory, "_snapshot"):
        return None

    def write(path):
        import pickle  # writing only: nothing is ever loaded
        data = memory._snapshot()
        with open(path, "xb") as f:
            pickle.dump(data, f)
    return write


def _stats_json(torch, device, rank, world):
    """memory_stats() under the device's name, with the rank and world size
    (vramreport's memory_stats reader takes all three)."""
    stats = {"rank": rank, "world_size": world,
             "cuda:%d" % device: dict(torch.cuda.memory_stats(device))}
    return json.dumps({k: v for k, v in stats.items() if v is not None}, indent=1) + "\n"


def _nvidia_smi_output(query):
    """nvidia-smi's CSV for one query, or (None, why)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None, "nvidia-smi not found on PATH"
    try:
        p = subprocess.run([exe, query, "--format=csv"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=NVSMI_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as e:
        return None, "nvidia-smi failed: %s" % e
    out = p.stdout.decode("utf-8", "replace")
    if p.returncode != 0:
        why = (p.stderr.decode("utf-8", "replace").strip().splitlines() or ["?"])[0]
        return None, "nvidia-smi exited %d: %s" % (p.returncode, why)
    if len(out.strip().splitlines()) < 2:
        return None, "nvidia-smi %s listed nothing" % query.split("=")[0]
    return out, None


def _nvidia_smi_capture():
    """The queries' outputs as one capture, or (None, why)."""
    sections, whys = [], []
    for title, query in NVSMI_QUERIES:
        out, why = _nvidia_smi_output(query)
        if out is None:
            whys.append(why)
            continue
        sections.append("%s\n# vramreport_capture :: %s\n# $ nvidia-smi %s --format=csv\n%s\n%s"
                        % (NVSMI_RULE, title, query, NVSMI_RULE, out))
    if whys:
        _note("nvidia-smi: %s" % "; ".join(sorted(set(whys))))
    return ("".join(sections), None) if sections else (None, whys[0] if whys else "no query")


def _parts(torch, device, rank, world, nvidia_smi):
    """(file name suffix, writer or None, why not) for each part of a dump."""
    memory = _cuda_memory(torch)
    snap = _snapshot_writer(memory) if memory is not None else None
    parts = [
        ("snapshot.pickle", snap, "torch.cuda.memory has no _dump_snapshot or _snapshot"),
        ("memory_stats.json", _write_text(lambda: _stats_json(torch, device, rank, world)), None),
        ("memory_summary.txt", _write_text(lambda: torch.cuda.memory_summary(device)), None),
    ]
    if nvidia_smi:
        out, why = _nvidia_smi_capture()
        parts.append(("nvidia-smi.txt", _write_text(lambda: out) if out is not None else None, why))
    return parts


def _dump(reason, device):
    torch = _torch()
    if torch is None:
        return None
    if not _state.lock.acquire(False):
        _note("a dump is in progress; %s not dumped" % reason)
        return None
    try:
        if device is None:
            device = torch.cuda.current_device()
        rank, world = _rank()
        tag = _tag(rank)
        folder = _new_folder(_state.out_dir, tag, reason)
        for suffix, write, why in _parts(torch, device, rank, world, _state.nvidia_smi):
            if write is None:
                _note("%s: %s.%s skipped: %s" % (folder, tag, suffix, why))
                continue
            try:
                _write_atomic(folder, "%s.%s" % (tag, suffix), write)
            except Exception as e:  # noqa: BLE001 - keep the other parts
                _warn("%s: %s.%s not written: %s" % (folder, tag, suffix, e))
        _note("wrote %s (read it with: vramreport %s -o report.html)" % (folder, _state.out_dir))
        return folder
    finally:
        _state.lock.release()


def dump(reason="manual", device=None):
    """Writes a dump now (the device: the current one by default); returns
    its folder, or None. Never raises."""
    try:
        return _dump(reason, device)
    except Exception as e:  # noqa: BLE001
        _warn("dump failed: %r" % (e,))
        return None


def _is_oom(e):
    oom_type = getattr(getattr(sys.modules.get("torch"), "cuda", None), "OutOfMemoryError", None)
    if oom_type is not None and isinstance(e, oom_type):
        return True
    return isinstance(e, RuntimeError) and "CUDA out of memory" in str(e)


@contextlib.contextmanager
def oom_guard(reason="oom"):
    """Dumps when a CUDA OOM error leaves the block, then lets it go on:
    for torch without the OOM observer (with it, the observer has dumped
    already, at the moment of the failure)."""
    try:
        yield
    except Exception as e:
        if _is_oom(e) and not _state.observer_attached:
            dump(reason)
        raise


# --- the profiler ---------------------------------------------------------

def _profiler_params(torch):
    import inspect
    try:
        return set(inspect.signature(torch.profiler.profile.__init__).parameters)
    except (TypeError, ValueError, AttributeError):
        return None


def profiler_kwargs(trace_dir=None):
    """Arguments for torch.profiler.profile(**...): memory events with
    categories, shapes, Python stacks and modules, CPU and CUDA activities,
    and with trace_dir, traces written there (gzip) as each profile ends.
    Flags this torch's profiler lacks are left out with a warning."""
    kwargs = dict(PROFILER_FLAGS)
    torch = _torch()
    profiler = getattr(torch, "profiler", None) if torch is not None else None
    if profiler is None:
        return kwargs
    params = _profiler_params(torch)
    for flag in list(kwargs):
        if params is not None and flag not in params:
            _warn("torch.profiler.profile has no %s: left out" % flag)
            del kwargs[flag]
    activity = getattr(profiler, "ProfilerActivity", None)
    if activity is not None:
        kwargs["activities"] = [a for a in (getattr(activity, "CPU", None),
                                            getattr(activity, "CUDA", None)) if a is not None]
    if trace_dir is not None and hasattr(profiler, "tensorboard_trace_handler"):
        rank, _ = _rank()
        kwargs["on_trace_ready"] = profiler.tensorboard_trace_handler(
            trace_dir, worker_name=_tag(rank), use_gzip=True)
    return kwargs
