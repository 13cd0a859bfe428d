"""torch.distributed: initialised when FAKE_TORCH_DIST_RANK is set."""
import os


def is_available():
    return True


def is_initialized():
    return "FAKE_TORCH_DIST_RANK" in os.environ


def get_rank():
    return int(os.environ["FAKE_TORCH_DIST_RANK"])


def get_world_size():
    return int(os.environ.get("FAKE_TORCH_DIST_WORLD", "1"))
