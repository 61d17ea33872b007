// Every edge (live or not) leaving each source with the given relation: reached
// from the source node, so the cost follows its degree, not the graph's size.
UNWIND $pairs AS pair
MATCH (a:Entity {user: $user, id: pair.source})-[r]->(b:Entity)
WHERE type(r) = pair.relation
RETURN r {.*, touched_at: toString(r.touched_at), created_at: toString(r.created_at), expires_at: toString(r.expires_at)} AS props, type(r) AS relation, a.id AS source, b.id AS target
