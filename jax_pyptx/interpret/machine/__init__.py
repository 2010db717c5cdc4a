"""The machine model: groups of threads at one PC, clusters and distributed shared memory
addresses, CTA barriers and mbarriers, registers owned by asynchronous instructions, the
program's flat layout and the handler registry.
"""
