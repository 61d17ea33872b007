"""The write path: transcript -> extraction (journaled) -> cleaning -> merge and
review -> commit. See :mod:`pegasus.write.pipeline`."""
