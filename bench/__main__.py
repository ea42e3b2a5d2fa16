"""Run every benchmark: ``python -m bench`` (or ``python -m bench NAME ...`` for some).

Each module ``bench/bench_<name>.py`` exposes ``main()`` and prints a markdown table;
the figures go into docs/benchmarks.md. Options after one name go to that benchmark:
``python -m bench scale --sizes small,medium``.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from pathlib import Path


def available() -> list[str]:
    folder = Path(__file__).parent
    return sorted(
        info.name.removeprefix("bench_")
        for info in pkgutil.iter_modules([str(folder)])
        if info.name.startswith("bench_")
    )


def main(argv: list[str]) -> int:
    first = next((i for i, a in enumerate(argv) if a.startswith("-")), len(argv))
    names, options = argv[:first], argv[first:]
    if options and len(names) != 1:
        print("options are for one benchmark: python -m bench NAME --option ...")
        return 2
    names = names or available()
    unknown = sorted(set(names) - set(available()))
    if unknown:
        print(f"unknown benchmark(s) {', '.join(unknown)}; available: {', '.join(available())}")
        return 2
    for name in names:
        print(f"\n# bench_{name}\n", flush=True)
        started = time.perf_counter()
        module = importlib.import_module(f"bench.bench_{name}")
        module.main(options) if options else module.main()
        print(f"\n(bench_{name} took {time.perf_counter() - started:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
