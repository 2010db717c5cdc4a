"""Triton elementwise kernels: vector add, fused GELU/SwiGLU, libdevice math, dropout (philox
random numbers), inline PTX through tl.inline_asm_elementwise."""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def gelu_swiglu(x_ptr, g_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    gelu = 0.5 * x * (1.0 + libdevice.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
    swish = g * tl.sigmoid(g)
    tl.store(out_ptr + offs, (gelu * swish).to(tl.bfloat16), mask=mask)


@triton.jit
def math_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.exp(x) + tl.log(tl.abs(x) + 1.0) + tl.sqrt(tl.abs(x)) + tl.sin(x) * tl.cos(x)
    y += libdevice.erf(x) + libdevice.pow(tl.abs(x), 1.5) + tl.rsqrt(x * x + 1.0)
    y += tl.math.exp2(x) + tl.math.log2(tl.abs(x) + 2.0) + tl.fdiv(x, 3.0) + libdevice.floor(x)
    tl.store(out_ptr + offs, y, mask=mask)


@triton.jit
def dropout_kernel(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    r = tl.rand(seed, offs)
    keep = r > p
    tl.store(out_ptr + offs, tl.where(keep, x / (1 - p), 0.0), mask=mask)


@triton.jit
def inline_asm_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    y = tl.load(y_ptr + offs, mask=mask, other=0)
    z = tl.inline_asm_elementwise(
        asm="""
        {
        .reg .b32 t;
        lop3.b32 t, $1, $2, 0x0F0F0F0F, 0x6A;
        shf.l.wrap.b32 $0, t, t, 7;
        }
        """,
        constraints="=r,r,r", args=[x, y], dtype=tl.uint32, is_pure=True, pack=1)
    tl.store(out_ptr + offs, z, mask=mask)


F32 = "*fp32"
CONFIGS = [
    # (name, fn, signature, constexprs, capability, options)
    ("add_sm90", add_kernel, {"x_ptr": F32, "y_ptr": F32, "out_ptr": F32, "n": "i32", "BLOCK": "constexpr"},
     {"BLOCK": 1024}, 90, {}),
    ("add_sm80", add_kernel, {"x_ptr": "*fp16", "y_ptr": "*fp16", "out_ptr": "*fp16", "n": "i32", "BLOCK": "constexpr"},
     {"BLOCK": 2048}, 80, {"num_warps": 8}),
    ("add_sm100", add_kernel, {"x_ptr": "*bf16", "y_ptr": "*bf16", "out_ptr": "*bf16", "n": "i32", "BLOCK": "constexpr"},
     {"BLOCK": 512}, 100, {}),
    ("gelu_swiglu_sm90", gelu_swiglu, {"x_ptr": "*bf16", "g_ptr": "*bf16", "out_ptr": "*bf16", "n": "i32", "BLOCK": "constexpr"},
     {"BLOCK": 1024}, 90, {}),
    ("math_sm90", math_kernel, {"x_ptr": F32, "out_ptr": F32, "n": "i32", "BLOCK": "constexpr"},
     {"BLOCK": 256}, 90, {}),
    ("math_sm80", math_kernel, {"x_ptr": F32, "out_ptr": F32, "n": "i32", "BLOCK": "constexpr"},
     {"BLOCK": 256}, 80, {}),
    ("dropout_sm90", dropout_kernel, {"x_ptr": F32, "out_ptr": F32, "n": "i32", "p": "fp32", "seed": "i32", "BLOCK": "constexpr"},
     {"BLOCK": 1024}, 90, {}),
    ("inline_asm_sm90", inline_asm_kernel, {"x_ptr": "*u32", "y_ptr": "*u32", "out_ptr": "*u32", "n": "i32", "BLOCK": "constexpr"},
     {"BLOCK": 512}, 90, {}),
]
