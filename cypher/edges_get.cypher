// Edges by element id, as edges_between / edges_locate found them.
MATCH (a:Entity)-[r]->(b:Entity)
WHERE elementId(r) IN $refs AND r.user = $user
RETURN r {.*, touched_at: toString(r.touched_at), created_at: toString(r.created_at), expires_at: toString(r.expires_at)} AS props, type(r) AS relation, a.id AS source, b.id AS target
