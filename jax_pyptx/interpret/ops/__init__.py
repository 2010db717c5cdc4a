"""The instruction families: each module registers its handlers in ``machine.registry``
under the ISA table's names (``scheduler.handlers`` imports them all).
"""
