// What was superseded: each old claim beside the claim that replaced it.
// In Browser: :param user => 'default'
MATCH (a:Entity {user: $user})-[old]->(b:Entity)
WHERE old.superseded_by IS NOT NULL
MATCH (a)-[new]->(c:Entity)
WHERE new.id = old.superseded_by
RETURN a, old, b, new, c
LIMIT 50
