UNWIND $ids AS id
MATCH (n:Entity {user: $user, id: id})-[r]-(:Entity)
WITH DISTINCT r
RETURN r {.*, touched_at: toString(r.touched_at), created_at: toString(r.created_at), expires_at: toString(r.expires_at)} AS props, type(r) AS relation,
       startNode(r).id AS source, endNode(r).id AS target
