// Edges by id, read whole, for ids of the form source::RELATION::target: found as
// edges_between finds them, so that a read of a few edges is one round trip.
UNWIND $ends AS end
MATCH (a:Entity {user: $user, id: end.source})
USING INDEX a:Entity(user, id)
MATCH (b:Entity {user: $user, id: end.target})
USING INDEX b:Entity(user, id)
CALL (a, b, end) {
  MATCH (a)-[r]->(b)
  WHERE r.id = end.id
  RETURN r
}
WITH DISTINCT a, r, b
RETURN r {.*, touched_at: toString(r.touched_at), created_at: toString(r.created_at), expires_at: toString(r.expires_at)} AS props, type(r) AS relation, a.id AS source, b.id AS target
