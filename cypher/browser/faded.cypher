// What faded: dormant or expired claims, most recently touched first.
// In Browser: :param user => 'default'
MATCH (a:Entity {user: $user})-[r]->(b:Entity)
WHERE r.dormant OR r.expired
RETURN a, r, b
ORDER BY r.touched_at DESC
LIMIT 50
