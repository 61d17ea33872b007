// Live edges carrying any of $labels (relation keys hit by a query word).
MATCH (a:Entity {user: $user})-[r]->(b:Entity)
WHERE type(r) IN $labels
  AND r.superseded_by IS NULL AND NOT r.dormant AND NOT r.expired
RETURN properties(r) AS props, type(r) AS relation, a.id AS source, b.id AS target
