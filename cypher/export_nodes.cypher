MATCH (n:Entity {user: $user})
RETURN properties(n) AS props
