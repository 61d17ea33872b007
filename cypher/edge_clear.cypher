// First half of an edge upsert: remove the stored versions of these edges.
// Run for a whole write before any edge_create, so the lookups never have to
// walk relationships created earlier in the same transaction.
UNWIND $rows AS row
MATCH (a:Entity {user: $user, id: row.source})-[old]->(b:Entity {user: $user, id: row.target})
WHERE old.id = row.id
DELETE old
