UNWIND $ids AS id
MATCH (n:Entity {user: $user, id: id})-[r]-(:Entity)
WITH DISTINCT r
RETURN properties(r) AS props, type(r) AS relation,
       startNode(r).id AS source, endNode(r).id AS target
