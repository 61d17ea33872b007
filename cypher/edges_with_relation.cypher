// Live edges carrying any of $labels (relation keys hit by a query word).
MATCH (a:Entity {user: $user})-[r]->(b:Entity)
WHERE type(r) IN $labels
  AND r.superseded_by IS NULL AND NOT r.dormant AND NOT r.expired
RETURN r {.*, touched_at: toString(r.touched_at), created_at: toString(r.created_at), expires_at: toString(r.expires_at)} AS props, type(r) AS relation, a.id AS source, b.id AS target
