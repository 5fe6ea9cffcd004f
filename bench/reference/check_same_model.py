#!/usr/bin/env python3
"""Checks that bench/reference/transformer_lm.py, and the independent CS336-style model of
bench/reference/cs336_model.py, compute the same function as the C++ model: loads the weights, batch, logits and loss that test/harness's
HarnessModel.ExportForPythonReference wrote (torch.save format) into the Python model.

    TESSEL_REFERENCE_CASE=case.pt HarnessModelTests --gtest_filter='*ExportForPythonReference'
    python3 bench/reference/check_same_model.py case.pt

With --run BINARY it runs the test binary itself first.
"""
import argparse
import os
import subprocess
import sys

import torch
import torch.jit._pickle  # noqa: F401  (the type-tag helper LibTorch files refer to)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cs336_model  # noqa: E402
import transformer_lm as ref  # noqa: E402


def same_as_cpp(label, model, case):
    """Runs `model` on the case's tokens; True when its logits and loss match the C++ ones."""
    with torch.no_grad():
        logits = model(case["tokens"])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 case["targets"].reshape(-1))
    diff = (logits - case["logits"]).abs().max().item()
    ok = diff < 1e-4 and abs(loss.item() - case["loss"].item()) < 1e-5
    print(f"{label}: max |logits(py) - logits(c++)| = {diff:.3g}, loss py {loss.item():.6f} "
          f"c++ {case['loss'].item():.6f}: {'same' if ok else 'DIFFERENT'}")
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("case")
    p.add_argument("--run", help="HarnessModelTests binary that writes the case first")
    args = p.parse_args()
    if args.run:
        env = dict(os.environ, TESSEL_REFERENCE_CASE=args.case)
        subprocess.run([args.run, "--gtest_filter=*ExportForPythonReference"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
    # LibTorch's pickle_save tags dict types with this helper; allow just that.
    with torch.serialization.safe_globals([torch.jit._pickle.restore_type_tag]):
        case = torch.load(args.case, weights_only=True)
    cfg = dict(case["config"], name="tiny", rope_theta=10000.0, attention="sdpa")
    results = []
    for attention in ("sdpa", "naive"):
        model = ref.TransformerLM(dict(cfg, attention=attention))
        missing, unexpected = model.load_state_dict(case["weights"], strict=False)
        if missing or unexpected:
            print(f"parameter names differ: missing {missing}, unexpected {unexpected}")
            return 1
        results.append(same_as_cpp(attention, model, case))
    # An independent model (separate q, k, v, W1, W3; complex RoPE; explicit softmax), the
    # weights copied across from the fused layout.
    model = cs336_model.CS336TransformerLM(cfg)
    left = model.from_fused(case["weights"])
    if left:
        print(f"weights the CS336 model did not take: {left}")
        return 1
    results.append(same_as_cpp("cs336 (separate q, k, v, w1, w3)", model, case))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
