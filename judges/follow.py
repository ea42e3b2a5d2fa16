"""Following a judging job from the command line until it ends (``judge --wait``): a
progress bar on a terminal, a plain line per change otherwise; the exit code says how it
ended (``status.exit_code``)."""

from __future__ import annotations

import time

from .models import JobStatus, JudgeJob
from .status import exit_code, judge_job_state

ENDED = (JobStatus.DONE, JobStatus.CANCELLED, JobStatus.FAILED, JobStatus.PAUSED)
BAR = 30


def _bar(state) -> str:
    total = (state.done or 0) + (state.left or 0)
    filled = BAR * (state.done or 0) // total if total else BAR
    return f"[{'#' * filled}{'.' * (BAR - filled)}] {state.done}/{total} {state.state}"


def _line(state) -> str:
    failed = sum(state.failures.values())
    return (
        f"job {state.id}: {state.state}, {state.done} of {state.done + state.left} pairs "
        f"settled, {failed} failed, {state.calls} calls"
    )


def follow(job_id: int, out, *, tty: bool, poll: float = 1.0, sleep=time.sleep) -> int:
    """Report the job's progress on ``out`` until it ends; its exit code."""
    shown = None
    while True:
        state = judge_job_state(JudgeJob.objects.get(pk=job_id))
        text = _bar(state) if tty else _line(state)
        if text != shown:
            if tty:
                out.write(f"\r{text}", ending="")
                out.flush()
            else:
                out.write(text)
            shown = text
        if state.state in ENDED:
            break
        sleep(poll)
    if tty:
        out.write("")
    failed = sum(state.failures.values())
    summary = (
        f"job {state.id} {state.state}: {state.done - failed} judged or skipped, {failed} failed"
    )
    if state.reason:
        summary += f" ({state.reason})"
    out.write(summary)
    return exit_code(state)
