// The strongest memories (as of the last decay pass).
// In Browser: :param user => 'default'
MATCH (a:Entity {user: $user})-[r]->(b:Entity)
WHERE r.superseded_by IS NULL AND NOT r.dormant AND NOT r.expired
RETURN a, r, b
ORDER BY r.strength DESC
LIMIT 25
