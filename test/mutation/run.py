#!/usr/bin/env python3
"""Mutation campaign: does the lit suite catch a wrong compiler?

Each mutation in mutations.json replaces one exact piece of text (found exactly once) in
one compiler source file by a plausible bug. For each: apply it, rebuild the tools lit
uses, run lit stopping at the first failure, record caught / survived (and the test that
caught it), and always restore the file. A mutant that does not compile is "invalid" and
not counted; neither is one marked "equivalent" in mutations.json (it cannot change what
the compiler does; its "note" says why) that survives. The tools are rebuilt from the
restored sources at the end.

  test/mutation/run.py                      # every mutation
  test/mutation/run.py --ids dot-1 dot-2    # a subset
  test/mutation/run.py --json results.json  # also write the results
  test/mutation/run.py --set heldout        # only the mutations of one "set"
  test/mutation/run.py --jobs 1 --build DIR # rebuild with one job, in another build directory
  test/mutation/run.py --unit tessel-lowering-unittests  # unit tests too, where lit passes
  test/mutation/run.py --suite DIR          # another lit suite (a lit.site.cfg.py's directory)
  test/mutation/run.py --baseline-suite DIR --baseline-json before.json
                                            # and one more suite on the same builds (a suite
                                            # before new tests), results recorded apart
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGETS = ["tessel-opt", "tesselc", "tessel-interpret", "tessel-translate"]


def build(build_dir, jobs):
    """Rebuilds the tools lit runs; True when that succeeded."""
    proc = subprocess.run(["ninja", "-C", build_dir, f"-j{jobs}"] + TARGETS,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc.returncode == 0


def run_lit(lit, suite, timeout):
    """Runs lit up to its first failure: (passed, first failing test or reason)."""
    cmd = [lit, "-q", "--max-failures=1", suite]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=timeout, start_new_session=True)
    except subprocess.TimeoutExpired:
        return False, "(lit timed out)"
    if proc.returncode == 0:
        return True, ""
    failed = re.findall(r"^\s*Tessel :: (\S+)", proc.stdout, re.M)
    failed += re.findall(r"^(?:FAIL|UNRESOLVED|TIMEOUT): Tessel :: (\S+)", proc.stdout, re.M)
    return False, failed[0] if failed else "(lit failed: see its output)"


def run_unit(targets, build_dir, jobs, timeout):
    """Builds and runs GoogleTest unit tests: (passed, first failing target or reason)."""
    proc = subprocess.run(["ninja", "-C", build_dir, f"-j{jobs}"] + targets,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        return False, f"unit: {' '.join(targets)} (does not build)"
    for target in targets:
        found = [os.path.join(d, target) for d, _, files in os.walk(build_dir) if target in files]
        if not found:
            return False, f"unit: {target} (not built)"
        try:
            proc = subprocess.run([found[0], "--gtest_brief=1"], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return False, f"unit: {target} (timed out)"
        if proc.returncode != 0:
            return False, f"unit: {target}"
    return True, ""


def run_one(m, args):
    """Applies, builds and tests one mutant: its result, and with --baseline-suite the
    result of that suite on the same build (None without)."""
    path = os.path.join(ROOT, m["file"])
    with open(path) as f:
        original = f.read()
    count = original.count(m["original"])
    if count != 1:
        r = {"result": "bad-original", "detail": f"original text found {count} times"}
        return r, dict(r) if args.baseline_suite else None
    def outcome(passed, test):
        if passed and m.get("equivalent"):
            return {"result": "equivalent", "detail": "", "note": m.get("note", "")}
        return {"result": "survived" if passed else "caught", "detail": test}
    try:
        with open(path, "w") as f:
            f.write(original.replace(m["original"], m["replacement"], 1))
        if not build(args.build, args.jobs):
            r = {"result": "invalid", "detail": "does not compile"}
            return r, dict(r) if args.baseline_suite else None
        baseline = None
        if args.baseline_suite:
            baseline = outcome(*run_lit(args.lit, args.baseline_suite, args.timeout))
        passed, test = run_lit(args.lit, args.suite or os.path.join(args.build, "test", "lit"),
                               args.timeout)
        if passed and args.unit:  # only a mutant lit does not catch pays for the unit tests
            passed, test = run_unit(args.unit, args.build, args.jobs, args.timeout)
        return outcome(passed, test), baseline
    finally:
        with open(path, "w") as f:
            f.write(original)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mutations", default=os.path.join(ROOT, "test/mutation/mutations.json"))
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="build directory")
    parser.add_argument("--lit", default="/usr/lib/llvm-22/bin/lit")
    parser.add_argument("--suite", help="lit suite to run (its lit.site.cfg.py's directory); "
                        "default BUILD/test/lit")
    parser.add_argument("--jobs", type=int, default=2, help="ninja jobs per rebuild")
    parser.add_argument("--baseline-suite",
                        help="also run this lit suite (e.g. the suite before new tests) on each "
                        "mutant's build, recorded in --baseline-json")
    parser.add_argument("--baseline-json", help="write the baseline suite's results here")
    parser.add_argument("--unit", nargs="*", default=[],
                        help="GoogleTest targets to build and run when lit passes")
    parser.add_argument("--ids", nargs="*", help="run only these mutation ids")
    parser.add_argument("--set", help='run only the mutations whose "set" is this (e.g. guide, heldout)')
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--timeout", type=int, default=1200, help="seconds per lit run")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    args = parser.parse_args()

    with open(args.mutations) as f:
        mutations = json.load(f)
    if args.ids:
        unknown = set(args.ids) - {m["id"] for m in mutations}
        if unknown:
            sys.exit(f"unknown ids: {' '.join(sorted(unknown))}")
        mutations = [m for m in mutations if m["id"] in args.ids]
    if args.set:
        mutations = [m for m in mutations if m.get("set") == args.set]
    if args.list:
        for m in mutations:
            print(f"{m['id']:<14} {m['file']:<34} {m['description']}")
        return

    results, baselines = [], []
    try:
        for m in mutations:
            start = time.time()
            r, b = run_one(m, args)
            for x in (r, b):
                if x is not None:
                    x.update(id=m["id"], file=m["file"], description=m["description"],
                             seconds=round(time.time() - start))
                    if m.get("set"):
                        x["set"] = m["set"]
            results.append(r)
            line = f"{r['id']:<14} {r['result']:<12} {r['detail']:<40} {r['seconds']:>4}s"
            if b is not None:
                baselines.append(b)
                line += f"   baseline: {b['result']} {b['detail']}"
            print(line, flush=True)
            if args.json:  # after every mutant, so a long run can be watched
                with open(args.json, "w") as f:
                    json.dump(results, f, indent=1)
            if args.baseline_json and baselines:
                with open(args.baseline_json, "w") as f:
                    json.dump(baselines, f, indent=1)
    finally:
        if not build(args.build, args.jobs):
            print("warning: rebuilding the unmutated tools failed", file=sys.stderr)

    counted = [r for r in results if r["result"] in ("caught", "survived")]
    caught = sum(r["result"] == "caught" for r in counted)
    print()
    print(f"{'id':<14} {'file':<34} {'result':<12} test")
    for r in results:
        print(f"{r['id']:<14} {r['file']:<34} {r['result']:<12} {r['detail']}")
    if counted:
        print(f"\ncaught {caught} of {len(counted)} ({100 * caught / len(counted):.0f}%); "
              f"{len(results) - len(counted)} equivalent, invalid or not applied")


if __name__ == "__main__":
    main()
