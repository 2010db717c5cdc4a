"""Runnable examples: ``python -m examples.hopper.rms_norm`` checks a kernel against jnp."""
