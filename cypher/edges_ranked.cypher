// The live edges with the highest ($strongest = true) or lowest stored strength.
MATCH (a:Entity {user: $user})-[r]->(b:Entity)
WHERE r.superseded_by IS NULL AND NOT r.dormant AND NOT r.expired
WITH r, a, b, CASE WHEN $strongest THEN -r.strength ELSE r.strength END AS rank
ORDER BY rank, r.id
LIMIT $limit
RETURN r {.*, touched_at: toString(r.touched_at), created_at: toString(r.created_at), expires_at: toString(r.expires_at)} AS props, type(r) AS relation, a.id AS source, b.id AS target
