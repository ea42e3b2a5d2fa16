"""Import errors: every bad line is collected and reported by number."""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_REPORTED = 200


class ImportFailed(Exception):
    """Nothing was written; ``errors`` lists each problem, most as ``line N: message``."""

    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class BadLine:
    """A line the reader could not turn into a row (malformed JSON, wrong columns…)."""

    message: str


@dataclass
class LineErrors:
    """Collects problems by line; keeps the first ``MAX_REPORTED`` and counts the rest."""

    messages: list[tuple[int, str]] = field(default_factory=list)
    count: int = 0

    def add(self, line: int, message: str) -> None:
        self.count += 1
        if len(self.messages) < MAX_REPORTED:
            self.messages.append((line, message))

    def __bool__(self) -> bool:
        return self.count > 0

    def raise_if_any(self) -> None:
        if not self.count:
            return
        errors = [
            f"line {line}: {message}" if line else message
            for line, message in sorted(self.messages, key=lambda m: m[0])
        ]
        if self.count > len(errors):
            errors.append(f"… and {self.count - len(errors)} more problems")
        raise ImportFailed(errors)
