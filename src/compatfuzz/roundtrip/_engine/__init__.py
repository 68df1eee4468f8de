"""The run engine: units run in order or in worker processes, time-boxed, sharded,
with their failing examples kept in the example database between runs."""
