UNWIND $ids AS id
MATCH (n:Entity {user: $user, id: id})
RETURN properties(n) AS props
