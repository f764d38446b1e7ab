"""A store on a small filesystem of its own (a tmpfs, in a mount namespace), for the faults of a
full disk: real ENOSPC to every process of a run, its answer workers included.

`tmpfs_wrap` mounts one for a single command. `HeldDisk` keeps one mounted across commands (a
sleeping process holds its namespace; the commands join it), and the test fills it at the moment
it chooses, through /proc/PID/root, then frees it for a resume.
"""

from __future__ import annotations

import errno
import subprocess
from pathlib import Path

import pytest

FILLER = ".filler"


def _can_mount() -> bool:
    probe = subprocess.run(
        ["unshare", "-m", "--", "sh", "-c", "mount -t tmpfs tmpfs /mnt"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


needs_mount = pytest.mark.skipif(
    not _can_mount(), reason="needs root to mount a small filesystem in a mount namespace"
)


def tmpfs_wrap(store: Path, options: str) -> list[str]:
    """Run the command with `store` a fresh tmpfs mounted with `options`, in its own mount
    namespace (gone with the process)."""
    store.mkdir(parents=True)
    script = f'mount -t tmpfs -o {options} tmpfs "$0" && exec "$@"'
    return ["unshare", "-m", "--", "sh", "-c", script, str(store)]


class HeldDisk:
    """A tmpfs of `size` mounted at `path` in a namespace held until `close`; `wrap` runs a
    command inside it."""

    def __init__(self, path: Path, size: str = "32m") -> None:
        path.mkdir(parents=True)
        self.path = path
        script = f'mount -t tmpfs -o size={size} tmpfs "$0" && echo mounted && exec sleep 3600'
        self._holder = subprocess.Popen(
            ["unshare", "-m", "--", "sh", "-c", script, str(path)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._holder.stdout is not None
        if self._holder.stdout.readline().strip() != "mounted":
            self.close()
            raise RuntimeError(f"could not mount a tmpfs at {path}")

    @property
    def wrap(self) -> list[str]:
        return ["nsenter", "-t", str(self._holder.pid), "-m", "--"]

    @property
    def _seen(self) -> Path:
        """The mounted folder, as this process reaches it (it is not mounted here)."""
        return Path(f"/proc/{self._holder.pid}/root") / self.path.relative_to("/")

    def fill(self) -> None:
        """Take every free byte: from now on, no file there can grow."""
        with (self._seen / FILLER).open("ab", buffering=0) as filler:
            for size in (1 << 16, 1 << 12, 1):
                try:
                    while True:
                        filler.write(bytes(size))
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise

    def free(self) -> None:
        (self._seen / FILLER).unlink()

    def close(self) -> None:
        self._holder.kill()
        self._holder.wait(timeout=10)
