"""The scheduler: a batch of CTAs run group by group (``context``; a timeline rides on the
same loop through ``timeline.GroupRun``), the program decoded into handlers, when
asynchronous work completes, and the limits (no progress, steps, time).
"""
