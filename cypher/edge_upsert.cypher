// Insert or fully replace edges; the relation is the relationship type.
// Replace = delete and create: MERGE on a dynamic relationship type cannot use
// expand-into and crawls on hub nodes, while this stays linear.
UNWIND $rows AS row
MATCH (a:Entity {user: $user, id: row.source})
MATCH (b:Entity {user: $user, id: row.target})
CALL (a, b, row) {
  OPTIONAL MATCH (a)-[old {id: row.id}]->(b)
  DELETE old
}
CREATE (a)-[r:$(row.relation)]->(b)
SET r = row.props
