MATCH (a:Entity {user: $user})-[r]->(b:Entity)
RETURN properties(r) AS props, type(r) AS relation, a.id AS source, b.id AS target
