// Raised in the transaction that writes the owner's nodes, edges or self node, and
// after the daily pass: a copy of the graph read at an older version is not used.
MERGE (o:Owner {user: $user})
SET o.graph_version = coalesce(o.graph_version, 0) + 1
