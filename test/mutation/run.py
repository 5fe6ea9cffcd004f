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


def run_lit(lit, build_dir, timeout):
    """Runs lit up to its first failure: (passed, first failing test or reason)."""
    cmd = [lit, "-q", "--max-failures=1", os.path.join(build_dir, "test", "lit")]
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


def run_one(m, args):
    path = os.path.join(ROOT, m["file"])
    with open(path) as f:
        original = f.read()
    count = original.count(m["original"])
    if count != 1:
        return {"result": "bad-original", "detail": f"original text found {count} times"}
    try:
        with open(path, "w") as f:
            f.write(original.replace(m["original"], m["replacement"], 1))
        if not build(args.build, args.jobs):
            return {"result": "invalid", "detail": "does not compile"}
        passed, test = run_lit(args.lit, args.build, args.timeout)
        if passed and m.get("equivalent"):
            return {"result": "equivalent", "detail": "", "note": m.get("note", "")}
        return {"result": "survived" if passed else "caught", "detail": test}
    finally:
        with open(path, "w") as f:
            f.write(original)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mutations", default=os.path.join(ROOT, "test/mutation/mutations.json"))
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="build directory")
    parser.add_argument("--lit", default="/usr/lib/llvm-22/bin/lit")
    parser.add_argument("--jobs", type=int, default=2, help="ninja jobs per rebuild")
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

    results = []
    try:
        for m in mutations:
            start = time.time()
            r = run_one(m, args)
            r.update(id=m["id"], file=m["file"], description=m["description"],
                     seconds=round(time.time() - start))
            results.append(r)
            print(f"{r['id']:<14} {r['result']:<12} {r['detail']:<40} {r['seconds']:>4}s",
                  flush=True)
            if args.json:  # after every mutant, so a long run can be watched
                with open(args.json, "w") as f:
                    json.dump(results, f, indent=1)
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
