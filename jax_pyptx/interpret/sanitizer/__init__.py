"""The sanitizer's checks: shared and global races, definedness, pointer provenance, the
arguments' roles, the async proxy, the ``wgmma.fence`` rule and the two severities.
"""
