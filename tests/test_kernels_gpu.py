"""The library's kernels on a real GPU (``pytest -m gpu``; skipped where JAX sees no CUDA
device, e.g. under the tests' default ``JAX_PLATFORMS=cpu``: run them with
``JAX_PLATFORMS=cuda,cpu python -m pytest -m gpu tests/test_kernels_gpu.py``, or
``benchmarks/gpu_proof.sh``). Values only, never timings (``benchmarks/kernels.py``
measures).

Every library kernel that runs on the GPU (``proof.runs_on``: ``sm_90a`` kernels on Hopper
only, ``sm_80`` ones on Ampere and later) is checked against its NumPy reference, within the
same per-element bound as the interpreter's checks (``proof.allowed_error``):

* through ``jax.jit`` at every interpreter case and at one larger shape (``large_shape``);
* eagerly (no ``jit``), under ``jax.vmap`` (two input sets stacked), under ``jax.shard_map``
  on a one-device mesh, and as a ``jax.export`` artifact serialized and loaded back, at the
  first case; one export is called in a fresh process (nothing traced there);
* ``jax.grad`` through the kernel with a backward kernel (``hopper/rms_norm``);
* through PyTorch (``jax_pyptx.to_torch``, CUDA tensors) where torch sees a GPU.

``JAX_PYPTX_REQUIRE_GPU=1`` makes a missing GPU an error instead of a skip (the GPU run of
``gpu_proof.sh``). ``JAX_PYPTX_GPU_TESTS_ON_CPU=1`` runs these tests on the CPU instead (the
kernels through the interpreter; exports are made for CUDA and loaded back, not called): a
check of the tests themselves before GPU time is spent on them (``tests/test_gpu_proof.py``
runs a few that way).
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from examples import proof
from examples.library import entries

LIB = entries()
CASES = [(e, c) for e in LIB for c in e.cases]
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


ON_CPU = os.environ.get("JAX_PYPTX_GPU_TESTS_ON_CPU") == "1"


def _gpus():
    try:
        import jax

        if ON_CPU:
            return jax.devices("cpu")
        return [d for d in jax.devices() if d.platform in ("gpu", "cuda")]
    except RuntimeError:
        return []


if os.environ.get("JAX_PYPTX_REQUIRE_GPU") == "1" and not _gpus():
    # benchmarks/gpu_proof.sh on the GPU machine: a JAX that sees no GPU is a failure there,
    # not a reason to skip everything
    import jax

    raise RuntimeError(f"JAX_PYPTX_REQUIRE_GPU=1 but JAX sees no CUDA device (JAX_PLATFORMS="
                       f"{os.environ.get('JAX_PLATFORMS')!r}); its backends: "
                       f"{sorted({d.platform for d in jax.devices()})}")

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not _gpus(), reason="no CUDA device visible to JAX")]


def large_shape(entry) -> dict:
    """A shape between the interpreter's cases and the benchmark's: every shape variable of
    the representative shape capped at 1024 (heads at 2, groups at 4)."""
    caps = {"H": 2, "G": 4}
    return {k: min(v, caps.get(k, 1024)) for k, v in entry.shape.items()}


def _kernel_on_gpu(entry, build=None):
    """The entry's kernel, or a skip where it cannot run on this GPU."""
    k = entry.kernel(**(build or {}))
    cc = getattr(_gpus()[0], "compute_capability", None)
    if not proof.runs_on(k.arch, cc):
        pytest.skip(f"{entry.name} targets {k.arch}; this GPU is compute capability {cc}")
    return k


def _outputs(out) -> tuple:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def check(entry, inputs, out, what: str):
    """Each output against the reference (an output with a None reference, a workspace, is
    not compared), within ``proof.allowed_error``; the message names the entry and the path."""
    refs = entry.reference(*inputs)
    outs = _outputs(out)
    refs = refs if isinstance(refs, tuple) else (refs,)
    assert len(outs) == len(refs), f"{entry.name} {what}: {len(outs)} outputs, {len(refs)} refs"
    for i, (o, r) in enumerate(zip(outs, refs)):
        if r is None:
            continue
        o = np.asarray(o)
        err, excess = proof.compare(o, r, proof.allowed_error(entry, inputs, o, r))
        assert excess <= 1.0, (f"{entry.name} {what} output {i}: max |err| {err:.3e} is "
                               f"{excess:.2f}x the allowed")


def _split(inputs):
    """(indices of the array inputs, a function of those arrays calling with the rest fixed):
    runtime scalars stay Python-side under vmap, shard_map and export."""
    idx = [i for i, a in enumerate(inputs) if np.ndim(a) > 0]

    def bind(k):
        def f(*arrays):
            args = list(inputs)
            for i, a in zip(idx, arrays):
                args[i] = a
            return k(*args)
        return f
    return idx, bind


def _first(entry):
    return entry.cases[0]


# ----------------------------------------------------------------------------- jit
@pytest.mark.parametrize("entry,case", CASES, ids=[f"{e.name}:{c.label}" for e, c in CASES])
def test_gpu_matches_reference(entry, case):
    import jax

    k = _kernel_on_gpu(entry, case.build)
    inputs = proof.make_inputs(entry, k, case.shape)
    dev = _gpus()[0]
    out = jax.jit(k)(*[jax.device_put(a, dev) for a in inputs])
    check(entry, inputs, out, f"jit {case.label}")


@pytest.mark.parametrize("entry", LIB, ids=[e.name for e in LIB])
def test_gpu_large_shape(entry):
    import jax

    if ON_CPU:
        pytest.skip("too large for the interpreter")
    k = _kernel_on_gpu(entry)
    shape = large_shape(entry)
    inputs = proof.make_inputs(entry, k, shape, seed=3)
    check(entry, inputs, jax.jit(k)(*inputs), f"jit {proof.shape_text(shape)}")


# ----------------------------------------------------------------------------- transforms
@pytest.mark.parametrize("entry", LIB, ids=[e.name for e in LIB])
def test_gpu_eager(entry):
    case = _first(entry)
    k = _kernel_on_gpu(entry, case.build)
    inputs = proof.make_inputs(entry, k, case.shape, seed=1)
    check(entry, inputs, k(*inputs), "eager")


@pytest.mark.parametrize("entry", LIB, ids=[e.name for e in LIB])
def test_gpu_vmap(entry):
    import jax

    case = _first(entry)
    k = _kernel_on_gpu(entry, case.build)
    sets = [proof.make_inputs(entry, k, case.shape, seed=s) for s in (4, 5)]
    idx, bind = _split(sets[0])
    stacked = [np.stack([s[i] for s in sets]) for i in idx]
    outs = jax.jit(jax.vmap(bind(k)))(*stacked)
    for b, inputs in enumerate(sets):
        check(entry, inputs, tuple(np.asarray(o)[b] for o in _outputs(outs)), f"vmap item {b}")


@pytest.mark.parametrize("entry", LIB, ids=[e.name for e in LIB])
def test_gpu_shard_map_one_device(entry):
    import jax
    from jax.sharding import Mesh, PartitionSpec as P

    case = _first(entry)
    k = _kernel_on_gpu(entry, case.build)
    inputs = proof.make_inputs(entry, k, case.shape, seed=6)
    idx, bind = _split(inputs)
    mesh = Mesh(np.array(_gpus()[:1]), ("d",))
    n_out = len(_outputs(jax.eval_shape(bind(k), *[inputs[i] for i in idx])))
    f = jax.shard_map(bind(k), mesh=mesh, in_specs=(P(),) * len(idx),
                      out_specs=P() if n_out == 1 else (P(),) * n_out, check_vma=False)
    check(entry, inputs, jax.jit(f)(*[inputs[i] for i in idx]), "shard_map")


@pytest.mark.parametrize("entry", LIB, ids=[e.name for e in LIB])
def test_gpu_export_roundtrip(entry):
    import jax

    case = _first(entry)
    k = _kernel_on_gpu(entry, case.build)
    inputs = proof.make_inputs(entry, k, case.shape, seed=7)
    idx, bind = _split(inputs)
    arrays = [inputs[i] for i in idx]
    exp = jax.export.export(jax.jit(bind(k)), platforms=["cuda"])(*arrays)
    back = jax.export.deserialize(exp.serialize())
    assert "@jax_pyptx_launch" in back.mlir_module()
    if ON_CPU:
        pytest.skip("exported for CUDA; calling it needs a GPU")
    check(entry, inputs, back.call(*arrays), "export -> deserialize -> call")


_FRESH = r"""
import sys
sys.path.insert(0, {repo!r})
import jax, numpy as np
from jax_pyptx.runtime import ffi_bridge
ffi_bridge.ensure_registered()          # the custom-call target; nothing else is traced here
data = np.load({npz!r})
def dtype(name):
    return getattr(ml_dtypes, name) if hasattr(ml_dtypes, name) else np.dtype(name)
arrays = [data[f"a{{i}}"].astype(dtype(data[f"t{{i}}"].item())) for i in range({n})]
with open({blob!r}, "rb") as f:
    exp = jax.export.deserialize(bytearray(f.read()))
assert [a.dtype for a in arrays] == [v.dtype for v in exp.in_avals], exp.in_avals
if {on_cpu}:
    sys.exit(0)
out = exp.call(*arrays)
np.save({res!r}, np.asarray(out).astype(np.float32))
"""


def test_gpu_export_called_in_a_fresh_process(tmp_path):
    import jax

    entry = next(e for e in LIB if e.name == "hopper/gemm-bf16-out-bf16")
    case = _first(entry)
    k = _kernel_on_gpu(entry, case.build)
    inputs = proof.make_inputs(entry, k, case.shape, seed=8)
    exp = jax.export.export(jax.jit(k), platforms=["cuda"])(*inputs)
    (tmp_path / "f.bin").write_bytes(exp.serialize())
    np.savez(tmp_path / "in.npz", **{f"a{i}": np.asarray(a, np.float32) for i, a in
                                     enumerate(inputs)},
             **{f"t{i}": np.array(np.asarray(a).dtype.name) for i, a in enumerate(inputs)})
    script = _FRESH.format(repo=REPO, npz=str(tmp_path / "in.npz"), n=len(inputs),
                           blob=str(tmp_path / "f.bin"), res=str(tmp_path / "out.npy"),
                           on_cpu=ON_CPU)
    env = dict(os.environ, PYTHONPATH=REPO, XLA_PYTHON_CLIENT_PREALLOCATE="false",
               JAX_PLATFORMS="cpu" if ON_CPU else "cuda,cpu")
    r = subprocess.run([sys.executable, "-c", "import ml_dtypes\n" + script], env=env,
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    if ON_CPU:
        pytest.skip("loaded back in a fresh process; calling it needs a GPU")
    out = np.load(tmp_path / "out.npy").astype(k.trace(**case.shape).outputs[0].dtype.np_dtype)
    check(entry, inputs, out, "export called in a fresh process")


# ----------------------------------------------------------------------------- grad
@pytest.mark.parametrize("jit", [True, False], ids=["jit", "eager"])
def test_gpu_grad_through_the_backward_kernel(jit):
    import jax
    import jax.numpy as jnp

    from examples.hopper.rms_norm import reference as rms_ref

    entry = next(e for e in LIB if e.name == "hopper/rms_norm-f32")
    k = _kernel_on_gpu(entry)
    rng = np.random.default_rng(9)
    x = rng.standard_normal((64, entry.params["n"]), dtype=np.float32)
    w = rng.standard_normal(entry.params["n"], dtype=np.float32)

    def loss(f):
        return lambda x, w: jnp.sum(f(x, w) * jnp.cos(3.0 * x))

    g = jax.grad(loss(k), argnums=(0, 1))
    g = jax.jit(g) if jit else g
    got = g(x, w)
    want = jax.grad(loss(rms_ref), argnums=(0, 1))(x, w)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------------------- torch
def _torch_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if ON_CPU or torch.cuda.is_available() else None


@pytest.mark.parametrize("entry", LIB, ids=[e.name for e in LIB])
def test_gpu_torch(entry):
    torch = _torch_cuda()
    if torch is None:
        pytest.skip("torch with a CUDA device is not installed here")
    device = "cpu" if ON_CPU else "cuda"
    from jax_pyptx.runtime.torch_op import to_torch, torch_dtype

    case = _first(entry)
    k = _kernel_on_gpu(entry, case.build)
    inputs = proof.make_inputs(entry, k, case.shape, seed=10)
    args = []
    for spec, a in zip(k.in_specs, inputs):
        if np.ndim(a) == 0:
            args.append(a.item())
            continue
        a = np.asarray(a)
        floating = a.dtype.name in ("bfloat16", "float16", "float32")
        t = torch.from_numpy(a.astype(np.float32) if floating else a)
        args.append(t.to(torch_dtype(spec.dtype)).to(device))
    out = to_torch(k)(*args)
    if not ON_CPU:
        torch.cuda.synchronize()
    specs = k.trace(**case.shape).outputs
    outs = tuple(o.float().cpu().numpy().astype(s.dtype.np_dtype)
                 if o.is_floating_point() else o.cpu().numpy()
                 for o, s in zip(_outputs(out), specs))
    check(entry, inputs, outs, "torch")
