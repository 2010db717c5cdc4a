import numpy as np, jax, jax.numpy as jnp
from jax_pyptx import Tile, kernel, ptx, reg
from jax_pyptx.types import f32, u32, u64

@kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
        grid=lambda N: ((N + 31) // 32, 1, 1))
def twice(X, Y):
    i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + ptx.special.tid.x()
    with ptx.if_(i < X.shape[0]):
        off = reg.cvt(i, u64) * 4
        v = reg.scalar(f32)
        ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
    ptx.ret()
for name, f in [("interpret", lambda: twice.interpret(np.zeros(0, np.float32))),
                ("eager", lambda: twice(jnp.zeros(0, jnp.float32))),
                ("jit", lambda: jax.jit(twice)(jnp.zeros(0, jnp.float32))),
                ("vmap0", lambda: jax.vmap(twice)(jnp.zeros((0, 4), jnp.float32))),
                ("ptx", lambda: twice.ptx(N=0)),
                ]:
    try:
        r = f(); print(name, "->", getattr(r, "shape", r if isinstance(r,str) and len(r)<100 else "text"), getattr(r, "dtype", None))
    except Exception as e:
        import traceback
        print(name, "!!", type(e).__name__, e)
        tb = traceback.extract_tb(e.__traceback__)
        print("   at", [f"{t.filename.split('jax_pyptx/')[-1]}:{t.lineno}" for t in tb if "jax_pyptx" in t.filename][-3:])
