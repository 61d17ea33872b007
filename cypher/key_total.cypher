// Keys of every owner: the most the shared vector index can return.
MATCH (k:Key)
RETURN count(k) AS keys
