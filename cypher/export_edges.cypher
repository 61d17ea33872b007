MATCH (a:Entity {user: $user})-[r]->(b:Entity)
RETURN r {.*, touched_at: toString(r.touched_at), created_at: toString(r.created_at), expires_at: toString(r.expires_at)} AS props, type(r) AS relation, a.id AS source, b.id AS target
