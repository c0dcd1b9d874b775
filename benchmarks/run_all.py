"""Run every benchmark script in ``benchmarks/`` (``make bench``), one after another.

Scripts are found by name (``*.py`` not starting with ``_``, except this runner,
``collect_results.py`` and ``figures.py``, which draws the README pictures from the results and
measures nothing), run as separate processes with the flags given here (``--quick`` by
default), and their last output line -- the ``key=value`` summary -- is collected. A failing
script does not stop the others; the exit status is non-zero if any failed. Afterwards
``collect_results.py`` (when present) assembles ``benchmarks/RESULTS.md``.

    python benchmarks/run_all.py [--quick | --full] [--only routing,pool_scale] [--skip NAME,...] [--timeout S]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
NOT_BENCHMARKS = {"run_all", "collect_results", "figures"}


def discover() -> list[Path]:
    return sorted(p for p in HERE.glob("*.py") if not p.stem.startswith("_") and p.stem not in NOT_BENCHMARKS)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", default=True, help="pass --quick to every script (default)")
    mode.add_argument("--full", action="store_true", help="run every script without --quick")
    ap.add_argument("--only", default="", help="comma-separated script names to run")
    ap.add_argument("--skip", default="", help="comma-separated script names to leave out")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per script")
    ap.add_argument("--list", action="store_true", help="print the scripts that would run and exit")
    args = ap.parse_args(argv)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    scripts = [p for p in discover() if (not only or p.stem in only) and p.stem not in skip]
    unknown = (only | skip) - {p.stem for p in discover()}
    if unknown:
        print(f"unknown benchmark(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    if args.list:
        print("\n".join(p.stem for p in scripts))
        return 0
    flags = [] if args.full else ["--quick"]
    outcomes: list[tuple[str, str, float, str]] = []
    for script in scripts:
        print(f"=== {script.stem} {' '.join(flags)}", flush=True)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run([sys.executable, str(script), *flags], cwd=HERE.parent, timeout=args.timeout,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            out, ok = proc.stdout, proc.returncode == 0
            status = "ok" if ok else f"failed (exit {proc.returncode})"
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout if isinstance(exc.stdout, str) else (exc.stdout or b"").decode(errors="replace")
            status = f"timed out after {args.timeout:.0f} s"
        secs = time.perf_counter() - t0
        lines = [ln for ln in (out or "").splitlines() if ln.strip()]
        summary = lines[-1] if lines and "=" in lines[-1] and status == "ok" else ""
        if status != "ok":
            print("\n".join(lines[-25:]), flush=True)
        print(f"--- {script.stem}: {status} in {secs:.0f} s{': ' + summary if summary else ''}", flush=True)
        outcomes.append((script.stem, status, secs, summary))
    collect = HERE / "collect_results.py"
    if collect.exists() and not only:
        subprocess.run([sys.executable, str(collect)], cwd=HERE.parent, check=False)
    print("\n=== summary")
    for name, status, secs, summary in outcomes:
        print(f"{name:<16} {status:<24} {secs:>6.0f} s  {summary}")
    return 0 if all(s == "ok" for _, s, _, _ in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
