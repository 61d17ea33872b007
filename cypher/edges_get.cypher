// Edges by id alone: relationship properties are indexed per type only, so this
// scans the owner's relationships. Hot paths reach edges from their nodes instead.
MATCH (a:Entity)-[r]->(b:Entity)
WHERE r.user = $user AND r.id IN $ids
RETURN r {.*, touched_at: toString(r.touched_at), created_at: toString(r.created_at), expires_at: toString(r.expires_at)} AS props, type(r) AS relation, a.id AS source, b.id AS target
