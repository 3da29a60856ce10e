"""How far chaingrad's random numbers are from torch's, in ulps, under each CPU setting.

Run from the repository root (benchmarks/README.md, "Random numbers: ulps"):

    python benchmarks/ulps.py [--seeds 50] [--json out.json]

torch draws float64 normals and exponentials with the C library's ``log``, ``log1p``,
``cos`` and ``sin``; chaingrad with numpy's, and numpy picks its own implementation by the
CPU it finds (on x86 with AVX-512, SIMD ``log`` and ``log1p`` that can differ from the C
library's by an ulp). Where torch has no AVX2 kernel (``ATEN_CPU_CAPABILITY=default``; ARM,
older x86), its float32 normals take the C library's ``logf``, ``cosf``, ``sinf`` while
chaingrad rounds float64 ones. So the distance depends on the machine: this script runs one
fresh process per setting (numpy's full dispatch; numpy without AVX-512; numpy's SSE4.2
baseline; torch without AVX2), each drawing the same numbers from both libraries, and prints
per setting and per draw the largest distance in ulps and the share of numbers that differ.

A setting the machine cannot show (no AVX-512 to turn off, say) measures what the machine
does instead; the header line of each setting prints what numpy found.

What is measured, over ``--seeds`` seeds (each a fresh generator, 10 sizes from 1 to 4099):

- ``log(1-u)``, ``log1p(-u)``, ``cos(2 pi u)``, ``sin(2 pi u)``: numpy's float64 functions
  against Python's ``math`` (the C library's, which torch calls), on the uniforms u the
  samplers feed them;
- ``randn``, ``randn`` below 16 numbers (one pair at a time; 100 calls in a row),
  ``exponential_(1.5)``,
  in float64, float32 and float16: chaingrad's numbers against torch's, in ulps of the dtype;
- ``normal_(0.5, 2.0)``: in ulps of the standard normal z before ``fma(z, std, mean)``, its
  last rounding taken off: ``(|ours - theirs| - ulp(ours)/2 - ulp(theirs)/2) / (std ulp(z))``
  (counted in ulps of the result, a number near 0 after ``mean + std z`` cancels would
  count thousands of ulps for a last-bit difference in z).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from typing import Any

from workloads.usage import Parser, check_outputs, usage_error

SETTINGS = {
    "numpy's full dispatch": {},
    "numpy without AVX-512": {"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL"},
    "numpy's SSE4.2 baseline": {
        "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"},
    "torch without AVX2": {"ATEN_CPU_CAPABILITY": "default"},
    "torch without AVX2, numpy without AVX-512": {
        "ATEN_CPU_CAPABILITY": "default", "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL"},
}
SIZES = [1, 7, 15, 16, 17, 100, 1000, 1001, 4096, 4099]
DTYPES = ["float64", "float32", "float16"]


def ulp_distance(ours: Any, theirs: Any) -> Any:
    """How many representable numbers of their dtype lie between ``ours`` and ``theirs``
    (0: the same bits; +0 and -0 count as one apart).

    Example:
        >>> import numpy as np
        >>> int(ulp_distance(np.float64(1.0), np.nextafter(1.0, 2.0)))
        1
    """
    import numpy as np

    ours, theirs = np.asarray(ours), np.asarray(theirs)
    signed = {2: np.int16, 4: np.int32, 8: np.int64}[ours.dtype.itemsize]

    def ordered(x: Any) -> Any:  # the float's bits as an integer that grows with the float
        bits = x.view(signed).astype(np.int64)
        return np.where(bits < 0, np.iinfo(signed).min - bits, bits)

    return np.abs(ordered(ours) - ordered(theirs))


def measure(seeds: int) -> dict[str, tuple[int, float]]:
    """``{what: (largest distance in ulps, share of numbers that differ)}`` in this process."""
    import numpy as np
    import torch

    import chaingrad

    found: dict[str, list[Any]] = {}

    def add(what: str, distance: Any) -> None:
        found.setdefault(what, []).append(np.asarray(distance).ravel())

    def pair(seed: int) -> tuple[Any, Any]:
        return chaingrad.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)

    u = chaingrad.rand(seeds * 20_000, generator=chaingrad.Generator().manual_seed(0),
                       dtype=chaingrad.float64).numpy()
    for name, ours, libm, x in [("log(1-u)", np.log, math.log, 1.0 - u),
                                ("log1p(-u)", np.log1p, math.log1p, -u),
                                ("cos(2 pi u)", np.cos, math.cos, 2.0 * math.pi * u),
                                ("sin(2 pi u)", np.sin, math.sin, 2.0 * math.pi * u)]:
        add(f"numpy {name}", ulp_distance(ours(x), np.array([libm(v) for v in x])))

    for seed in range(seeds):
        for dtype in DTYPES:
            ct, tt = getattr(chaingrad, dtype), getattr(torch, dtype)
            for size in SIZES:
                ours, theirs = pair(seed)
                draws = 100 if size < 16 else 1  # below 16, one pair at a time: many calls
                mine = [chaingrad.randn(size, generator=ours, dtype=ct) for _ in range(draws)]
                its = [torch.randn(size, generator=theirs, dtype=tt) for _ in range(draws)]
                add(f"randn{' below 16' if size < 16 else ''} {dtype}",
                    ulp_distance(np.concatenate([m.numpy() for m in mine]),
                                 np.concatenate([t.numpy() for t in its])))
                add(f"exponential_ {dtype}", ulp_distance(
                    chaingrad.zeros(size, dtype=ct).exponential_(1.5, generator=ours).numpy(),
                    torch.zeros(size, dtype=tt).exponential_(1.5, generator=theirs).numpy()))
                mine = chaingrad.zeros(size, dtype=ct).normal_(0.5, 2.0, generator=ours).numpy()
                its = torch.zeros(size, dtype=tt).normal_(0.5, 2.0, generator=theirs).numpy()
                add(f"normal_(0.5, 2) {dtype}, ulps of z", standard_ulps(mine, its, 0.5, 2.0))
    return {what: (int(np.concatenate(d).max()), float((np.concatenate(d) > 0).mean()))
            for what, d in found.items()}


def standard_ulps(ours: Any, theirs: Any, mean: float, std: float) -> Any:
    """The distance between two draws of ``fma(z, std, mean)`` in ulps of z, each one's last
    rounding taken off (0 where those roundings explain it all); z is estimated from torch's
    number."""
    import numpy as np

    wide, its = ours.astype(np.float64), theirs.astype(np.float64)
    z = np.abs((its - mean) / std).astype(theirs.dtype)
    last = (np.spacing(np.abs(ours)).astype(np.float64)
            + np.spacing(np.abs(theirs)).astype(np.float64)) / 2
    beyond = np.maximum(np.abs(wide - its) - last, 0.0)
    return np.ceil(beyond / (std * np.spacing(z).astype(np.float64)))


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="ulps.py", description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50, help="seeds per setting (50)")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--here", action="store_true", help="measure in this process only")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        usage_error(parser.prog, f"--seeds: expected at least 1, got {args.seeds}")
    check_outputs(parser.prog, args, ("json",))
    if args.here:
        import numpy as np

        simd = np._core._multiarray_umath  # what np.show_runtime() prints as "found"
        print(json.dumps({"numpy found": [name for name in simd.__cpu_dispatch__
                                          if simd.__cpu_features__.get(name)],
                          "figures": measure(args.seeds)}))
        return 0
    results = {}
    for setting, env in SETTINGS.items():
        done = subprocess.run([sys.executable, __file__, "--here", "--seeds", str(args.seeds)],
                              env={**os.environ, **env}, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{setting}: failed\n{done.stderr}", file=sys.stderr)
            return 1
        results[setting] = json.loads(done.stdout)
        simd = " ".join(results[setting]["numpy found"]) or "only its baseline"
        print(f"\n{setting} ({' '.join(f'{k}={v!r}' for k, v in env.items()) or 'as is'}; "
              f"numpy found: {simd})")
        for what, (largest, share) in results[setting]["figures"].items():
            print(f"  {what:<38} {largest:>4} ulp   {100 * share:7.3f}% differ")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(results, out, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
