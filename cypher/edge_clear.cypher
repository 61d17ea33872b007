// First half of an edge upsert: remove the stored versions of these edges.
// Run for a whole write before any edge_create, so the lookups never have to
// walk relationships created earlier in the same transaction. The index hints keep
// the plan from depending on statistics (a plan made on an empty database scanned
// every node for a 100k-edge import). The subquery gets both ends bound, so Neo4j
// reads only the relationships between them from the end with fewer; in one MATCH
// it walked all of a hub's (25,000 at the user's own node for each claim of it).
UNWIND $rows AS row
MATCH (a:Entity {user: $user, id: row.source})
USING INDEX a:Entity(user, id)
MATCH (b:Entity {user: $user, id: row.target})
USING INDEX b:Entity(user, id)
CALL (a, b, row) {
  MATCH (a)-[old]->(b)
  WHERE old.id = row.id
  DELETE old
}
