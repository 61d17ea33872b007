// Edges by id alone: relationship properties are indexed per type only, so this
// walks the owner's relationships (from the owner's nodes, by index, never the
// whole database's). Hot paths reach edges from their nodes instead.
MATCH (a:Entity {user: $user})-[r]->(b:Entity)
WHERE r.id IN $ids
RETURN r {.*, touched_at: toString(r.touched_at), created_at: toString(r.created_at), expires_at: toString(r.expires_at)} AS props, type(r) AS relation, a.id AS source, b.id AS target
