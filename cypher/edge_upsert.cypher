// Insert or fully replace edges; the relation is the relationship type.
UNWIND $rows AS row
MATCH (a:Entity {user: $user, id: row.source})
MATCH (b:Entity {user: $user, id: row.target})
MERGE (a)-[r:$(row.relation) {id: row.id}]->(b)
SET r = row.props
