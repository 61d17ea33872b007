// What a recall looks at once: the owner's self node, how many name keys it has,
// the version of its keys (raised by every write that adds, changes or removes one)
// and the version of its last removal, and the version of its graph (raised by every
// write to its nodes or edges, and by the daily pass). The key versions say whether
// a copy of the keys held in memory is current, can catch up on what was written
// since (keys carry the version that wrote them), or must be read again; the graph
// version, whether a copy of the graph is current.
OPTIONAL MATCH (o:Owner {user: $user})
RETURN o.self_id AS self_id, o.key_count AS names, coalesce(o.keys_version, 0) AS version,
       coalesce(o.keys_removed, 0) AS removed, coalesce(o.graph_version, 0) AS graph
