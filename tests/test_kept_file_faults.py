"""A writer of a kept file killed half way (``kill -9``, SIGTERM) leaves the file as it
was, and its leftover is removed later; writers racing on one file leave one whole file.
Real processes: the writer stops after its first array until it is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from annotator import kept_files

ROOT = Path(__file__).resolve().parent.parent

WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import numpy as np
    from annotator import kept_files

    target, marker = Path(sys.argv[1]), Path(sys.argv[2])
    save = np.save

    def stall(handle, array, **options):  # one array written, then wait to be killed
        save(handle, array, **options)
        handle.flush()
        marker.touch()
        time.sleep(600)

    np.save = stall
    kept_files.write_arrays(target, [np.full(1000, 7), np.arange(5)])
    """
)


def _killed_writer(target: Path, marker: Path, how: signal.Signals) -> int:
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target), str(marker)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert writer.poll() is None, "the writer ended before it was killed"
            assert time.monotonic() < deadline, "the writer never started"
            time.sleep(0.05)
        writer.send_signal(how)
        return writer.wait(timeout=30)
    finally:
        if writer.poll() is None:
            writer.kill()


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_a_writer_killed_half_way_leaves_the_file_as_it_was(settings, tmp_path, how):
    settings.ASSAY_RUN_INDEX_DIR = tmp_path
    target = tmp_path / "labels.x.1.2.npy"
    old = [np.arange(3), np.array([1, 2])]
    assert kept_files.write_arrays(target, old)
    code = _killed_writer(target, tmp_path / "half-way", how)
    assert code == -how
    (part,) = tmp_path.glob(".*.part")  # half a file, beside the whole one
    assert part.stat().st_size > 0
    kept = kept_files.read_arrays(target, 2)
    assert kept is not None and all(np.array_equal(a, b) for a, b in zip(kept, old, strict=True))
    # The leftover goes once it is older than any write takes.
    assert kept_files.remove_stale_parts() == 0
    assert kept_files.remove_stale_parts(older_than=-1) == 1
    assert not list(tmp_path.glob(".*.part"))


def test_a_writer_killed_before_the_first_file_leaves_none(settings, tmp_path):
    settings.ASSAY_RUN_INDEX_DIR = tmp_path
    target = tmp_path / "units.x.1.2.npy"
    _killed_writer(target, tmp_path / "half-way", signal.SIGKILL)
    assert not target.exists() and kept_files.read_arrays(target, 2) is None


def test_writers_racing_on_one_file_leave_one_whole_file(tmp_path):
    """Readers during the race see a whole file of one writer, or none."""
    target = tmp_path / "values.x.npy"
    contents = {k: [np.full(20_000, k), np.arange(k + 1)] for k in range(4)}
    seen, stop = [], threading.Event()

    def write(k: int) -> None:
        while not stop.is_set():
            assert kept_files.write_arrays(target, contents[k])

    def read() -> None:
        while not stop.is_set():
            arrays = kept_files.read_arrays(target, 2)
            if arrays is not None:
                seen.append(int(arrays[0][0]))
                assert all(
                    np.array_equal(a, b)
                    for a, b in zip(arrays, contents[int(arrays[0][0])], strict=True)
                )

    reader = threading.Thread(target=read)
    reader.start()
    writers = [threading.Thread(target=write, args=(k,)) for k in contents]
    for thread in writers:
        thread.start()
    deadline = time.monotonic() + 30
    while len(set(seen)) < len(contents) and time.monotonic() < deadline:
        time.sleep(0.01)  # until every writer's file has been read whole at least once
    stop.set()
    for thread in [*writers, reader]:
        thread.join()
    final = kept_files.read_arrays(target, 2)
    assert final is not None and int(final[0][0]) in contents
    assert set(seen) == set(contents)
    assert not list(tmp_path.glob(".*.part"))
