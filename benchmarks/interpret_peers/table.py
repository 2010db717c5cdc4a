"""The peer table of ``python benchmarks/interpret.py --peers``: ours (sanitizer on and off,
thread-instructions per second) against Triton's interpreter (a subprocess with
``TRITON_INTERPRET=1``) and Pallas ``interpret=True`` (this process), warm, on the workloads of
``spec``; ratios ours(sanitizer on) / Triton, ours(sanitizer on) / Pallas, ours on / off.
"""
from __future__ import annotations

import importlib.util
import json
import os
import platform
import subprocess
import sys

from . import ours, pallas_peer, pinning, spec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOT_INSTALLED = "not installed"
NOT_RUN = "not run"


# ----------------------------------------------------------------------------- Triton
def install_triton(target: str) -> str:
    """``pip install --target TARGET triton`` unless TARGET already holds triton; returns
    TARGET. Triton's interpreter needs torch, which is never installed here: it must be
    importable from this Python."""
    if importlib.util.find_spec("torch") is None:
        raise SystemExit(f"--install-peers: Triton's interpreter needs torch, and {sys.executable} "
                         f"cannot import it; install torch into this Python first (the benchmark "
                         f"installs only triton, into {target})")
    if os.path.isdir(os.path.join(target, "triton")):
        print(f"using the Triton already in {target}", file=sys.stderr)
        return target
    os.makedirs(target, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "install", "--target", target, "triton"]
    print("installing:", " ".join(cmd), file=sys.stderr)
    r = subprocess.run(cmd)
    if r.returncode:
        raise SystemExit(f"--install-peers: pip exited with {r.returncode} installing triton "
                         f"into {target}")
    return target


def run_triton(keys, smoke: bool, reps: int, peers_dir: str | None, blocks=None) -> tuple:
    """``(status, why, {workload: result})`` from the Triton subprocess; status is ``"ok"``,
    ``NOT_INSTALLED`` (triton or torch cannot be imported there: ``why`` says which) or
    ``"failed"`` (``why``: the error)."""
    env = spec.pin_threads(dict(os.environ))
    env["TRITON_INTERPRET"] = "1"
    path = [p for p in (peers_dir, ROOT, env.get("PYTHONPATH")) if p]
    env["PYTHONPATH"] = os.pathsep.join(path)
    cmd = [sys.executable, "-m", "benchmarks.interpret_peers.triton_peer", "--reps", str(reps),
           "--only", ",".join(keys)] + (["--smoke"] if smoke else [])
    if blocks is not None:
        cmd += ["--blocks", json.dumps(blocks)]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    results = {}
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            if "missing" in d:
                return NOT_INSTALLED, d["error"], results
            results[d["workload"]] = d
    if r.returncode:
        tail = r.stderr.strip().splitlines()[-1:] or [f"exit status {r.returncode}"]
        return "failed", tail[0], results
    return "ok", None, results


# ----------------------------------------------------------------------------- measuring
def measure(keys=None, smoke: bool = False, reps: int = 3, triton: bool = True,
            peers_dir: str | None = None, blocks: dict | None = None, progress=None) -> dict:
    """Every figure of the table: ``{"rows": [...], "peers": {...}, "env": {...}}``.
    ``keys``: workloads (default all); ``smoke``: the tiny shapes; ``triton``: run the Triton
    subprocess (with ``peers_dir`` on its path); ``blocks``: the peers' blocks (default
    ``spec.PEER_BLOCKS``); ``progress``: a callable given a line per step."""
    keys = list(keys or spec.WORKLOADS)
    blocks = dict(blocks or spec.PEER_BLOCKS)
    for key in keys:                    # blocks that do not divide fail before any timing
        spec.blocks_for(key, spec.shape_of(key, smoke), blocks)
    say = progress or (lambda s: None)
    rows = []
    for label, key, entry in ours.ROWS:
        if key in keys:
            say(f"ours: {label}")
            rows.append(ours.measure(label, key, entry, spec.shape_of(key, smoke), reps))
    peers = {}
    why = pallas_peer.available()
    pallas = {}
    if why is None:
        import jax

        peers["pallas"] = {"status": "ok", "version": f"jax {jax.__version__}"}
        for key in keys:
            say(f"Pallas interpret: {key}")
            pallas[key] = pallas_peer.measure(key, spec.shape_of(key, smoke), reps, blocks)
    else:
        peers["pallas"] = {"status": NOT_INSTALLED, "why": why}
    tri = {}
    if triton:
        say("Triton interpreter (subprocess): " + ", ".join(keys))
        status, why, tri = run_triton(keys, smoke, reps, peers_dir, blocks)
        version = next((f"triton {r['triton']}" for r in tri.values()), None)
        peers["triton"] = {"status": status, "why": why, "version": version,
                           "peers_dir": peers_dir}
    else:
        peers["triton"] = {"status": NOT_RUN, "why": "--no-triton"}
    for r in rows:
        on, off, ti = r["san_on_s"], r["san_off_s"], r["thread_instructions"]
        r["on_off"] = on / off
        r["thread_instr_per_s_on"] = ti / on
        r["thread_instr_per_s_off"] = ti / off
        for name, res in (("triton", tri), ("pallas", pallas)):
            p = res.get(r["workload"])
            r[f"{name}_s"] = p["seconds"] if p else None
            r[f"{name}_max_err"] = p["max_err"] if p else None
            r[f"ours_over_{name}"] = on / p["seconds"] if p else None
    return {"rows": rows, "peers": peers, "blocks": blocks, "reps": reps, "smoke": smoke,
            "env": _env()}


def _env() -> dict:
    pinned = pinning.pinned_in_time()
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"pinned_threads": pinned, **{k: os.environ.get(k) for k in spec.PINNED_ENV},
            "python": platform.python_version(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "loadavg": load}


# ----------------------------------------------------------------------------- printing
def _ms(s) -> str:
    return f"{s * 1e3:.1f} ms" if s is not None else "-"


def _x(r) -> str:
    return f"{r:.2f}x" if r is not None else "-"


def format_table(res: dict) -> str:
    """The printed table (ratios are ours with the sanitizer on over the peer)."""
    tri, pal = res["peers"]["triton"], res["peers"]["pallas"]
    cols = [("workload", 24), ("shape", 22), ("ours on", 11), ("ours off", 11), ("on/off", 7),
            ("thr-instr/s", 12), ("Triton", 15), ("on/Triton", 10), ("Pallas", 15),
            ("on/Pallas", 10)]
    lines = ["".join(f"{n:>{w}}" if i > 1 else f"{n:<{w}}" for i, (n, w) in enumerate(cols))]
    for r in res["rows"]:
        t = _ms(r["triton_s"]) if r["triton_s"] is not None else tri["status"]
        p = _ms(r["pallas_s"]) if r["pallas_s"] is not None else pal["status"]
        cells = [r["row"], spec.shape_text(r["shape"]), _ms(r["san_on_s"]), _ms(r["san_off_s"]),
                 _x(r["on_off"]), f"{r['thread_instr_per_s_on'] / 1e6:.1f} M", t,
                 _x(r["ours_over_triton"]), p, _x(r["ours_over_pallas"])]
        lines.append("".join(f"{c:>{w}}" if i > 1 else f"{c:<{w}}"
                             for i, (c, (_, w)) in enumerate(zip(cells, cols))))
    e = res["env"]
    lines += ["",
              f"warm: best of {res['reps']} after one warm-up (ours: on and off interleaved after two "
              f"warm-up rounds); 'on'/'off': our sanitizer; ratios "
              f"< 1 mean ours is faster; thr-instr/s: our thread-instructions per second "
              f"(sanitizer on)",
              f"Triton: {tri.get('version') or tri['status']}; Pallas: "
              f"{pal.get('version') or pal['status']}; blocks per program (both peers): "
              f"{_blocks(res['blocks'])}",
              f"threads pinned: {e['pinned_threads'] or 'NO (NumPy or jax loaded before the pinning)'}; "
              f"{e['cpus']} CPUs, load average "
              f"{', '.join(f'{x:.2f}' for x in e['loadavg']) if e['loadavg'] else '?'}"]
    for name, p in (("Triton", tri), ("Pallas", pal)):
        if p["status"] != "ok":
            lines.append(f"{name} {p['status']}: {p.get('why')}")
    return "\n".join(lines)


def _blocks(b: dict) -> str:
    return (f"y = x*2+1 {b['axpb']} elements, RMSNorm / softmax {b['rows']} row(s), GEMM "
            f"{'x'.join(map(str, b['gemm']))} (BM x BN x BK), attention "
            f"{'x'.join(map(str, b['attention']))} (queries x keys)")


def main(args) -> int:
    """``benchmarks/interpret.py --peers`` (``args``: its parsed options)."""
    peers_dir = args.peers_dir
    if args.install_peers:
        peers_dir = install_triton(args.install_peers)
    keys = args.only.split(",") if args.only else None
    for k in keys or ():
        if k not in spec.WORKLOADS:
            raise SystemExit(f"--only: unknown workload {k!r}; known: {', '.join(spec.WORKLOADS)}")
    reps = args.reps if args.reps else (1 if args.smoke else 3)
    try:
        blocks = spec.parse_blocks(args.peer_blocks or "")
        for key in keys or spec.WORKLOADS:
            spec.blocks_for(key, spec.shape_of(key, args.smoke), blocks)
    except ValueError as e:
        raise SystemExit(str(e)) from None
    res = measure(keys, smoke=args.smoke, reps=reps, triton=not args.no_triton,
                  peers_dir=peers_dir, blocks=blocks,
                  progress=lambda s: print(s, file=sys.stderr, flush=True))
    print(format_table(res))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
        print(f"wrote {args.json}")
    return 0
