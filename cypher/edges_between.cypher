// Where edges are by id: ids of the form source::RELATION::target name their ends,
// so both ends come by index and only relationships between them are read, from the
// end with fewer (bound before the subquery; see edge_clear).
// (Walking the owner's relationships instead took 436 ms for 100 ids at 100k.)
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
RETURN DISTINCT r.id AS id, elementId(r) AS ref
