"""Memory and the values it holds: address spaces and their checks, the alloca stack, Tensor
Memory, operand access, floating-point formats, the tensor-map encoding, and the sanitizer's
large per-launch arrays, recycled from one launch to the next (``shadow``).
"""
