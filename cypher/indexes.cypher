// Every index and its state, for `pegasus doctor` (a constraint owns an index of its name).
SHOW INDEXES YIELD name, type, state
RETURN name, type, state
