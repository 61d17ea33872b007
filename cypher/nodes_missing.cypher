// Which of $ids name no node of this owner (checked before edges are written).
UNWIND $ids AS id
OPTIONAL MATCH (n:Entity {user: $user, id: id})
WITH id, n
WHERE n IS NULL
RETURN id
